package cudagen

// ReservedName is reservedName, for the external tests.
var ReservedName = reservedName
