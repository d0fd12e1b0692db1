package cudagen

import (
	"reflect"
	"testing"
)

// A warpgroup's columns go to instructions of at most 256, 256 wide first.
func TestWgmmaChunks(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []wgmmaChunk
	}{
		{64, []wgmmaChunk{{0, 64}}},
		{256, []wgmmaChunk{{0, 256}}},
		{320, []wgmmaChunk{{0, 256}, {256, 64}}},
		{512, []wgmmaChunk{{0, 256}, {256, 256}}},
		{520, []wgmmaChunk{{0, 256}, {256, 256}, {512, 8}}},
	} {
		if got := wgmmaChunks(tc.n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("wgmmaChunks(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}
