package cudagen

import "os"

// Switch names a schedule choice that Options.Switches may force on or
// off for every program compiled with them: an experiment, or one side of
// an A/B timing. The generated program is a function of the IR and the
// Options alone; SwitchesFromEnv is how the CLI and the GPU scripts set
// them from TILEGO_<NAME>.
type Switch string

const (
	SwitchTMA       Switch = "TMA"       // TMA loads and stores on sm_90a (tma.go)
	SwitchWS        Switch = "WS"        // a producer warpgroup (ws.go)
	SwitchPingPong  Switch = "PINGPONG"  // the consumers take turns at the tensor cores (pingpong.go)
	SwitchWGSplit   Switch = "WGSPLIT"   // warpgroups split a Gemm's N (tl's SplitN)
	SwitchSplitRing Switch = "SPLITRING" // a deferred loop's K and V on rings of their own (split_rings.go)
	SwitchSkipOnes  Switch = "SKIPONES"  // warps whose factors are all one skip a rescale (tl's ScaleRows)
	SwitchLate      Switch = "LATE"      // a dealt walk's short blocks start late (tl's LateStart)
	SwitchCluster   Switch = "CLUSTER"   // clusters of two multicasting K and V (cluster.go)
	SwitchHalves    Switch = "HALVES"    // the consumers store their halves apart (warpgroup_epilogue.go)
	SwitchDraw      Switch = "DRAW"      // a walk draws its tiles from a counter (tl's Draw)
	SwitchCoop      Switch = "COOP"      // a kernel whose blocks wait for each other launches cooperatively
	SwitchPDL       Switch = "PDL"       // a chain's early steps start beside the one before
)

// AllSwitches lists every switch.
var AllSwitches = []Switch{SwitchTMA, SwitchWS, SwitchPingPong, SwitchWGSplit, SwitchSplitRing, SwitchSkipOnes,
	SwitchLate, SwitchCluster, SwitchHalves, SwitchDraw, SwitchCoop, SwitchPDL}

// Switches force schedule choices on (true) or off (false); a switch not
// in the map keeps what the program asks for or the compiler's default.
type Switches map[Switch]bool

// Choose is asked (the program's hint, or the default) unless s forces sw.
func (s Switches) Choose(sw Switch, asked bool) bool {
	if v, ok := s[sw]; ok {
		return v
	}
	return asked
}

// SwitchesFromEnv reads TILEGO_<NAME>=1 or 0 for each switch (other values
// and unset keep the choice): for the CLI and the GPU scripts, the edge
// where the environment may decide.
func SwitchesFromEnv() Switches {
	s := Switches{}
	for _, sw := range AllSwitches {
		switch os.Getenv("TILEGO_" + string(sw)) {
		case "1":
			s[sw] = true
		case "0":
			s[sw] = false
		}
	}
	return s
}
