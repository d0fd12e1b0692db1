package bench

import (
	"fmt"

	"github.com/tilego/tilego/kernels"
)

// RowsShapes are the rows suite's tensors (rows, cols): a short and a long
// row at 4096 rows, many short rows, and a large square-ish one;
// scripts/rows_peers.py times the peers on the same list.
var RowsShapes = [][2]int{{4096, 1024}, {4096, 4096}, {4096, 16384}, {32768, 1024}, {16384, 8192}}

// rows: the example row kernels (RMSNorm, LayerNorm, softmax) in bf16 and
// f32, held to the copy bandwidth; --quick keeps 4096×4096. Each point
// tries the tiles rowsConfigs lists and keeps the fastest.
func rows(o SuiteOptions) ([]Point, error) {
	shapes := RowsShapes
	if o.Quick {
		shapes = shapes[1:2]
	}
	var ps []Point
	for _, name := range []string{"rmsnorm", "layernorm", "softmax"} {
		e, err := kernels.Lookup(name)
		if err != nil {
			return nil, err
		}
		for _, dt := range []string{"bf16", "f32"} {
			for _, s := range shapes {
				p, err := e.Problem(map[string]string{"rows": fmt.Sprint(s[0]), "cols": fmt.Sprint(s[1]), "dtype": dt})
				if err != nil {
					return nil, err
				}
				ps = append(ps, Point{Suite: "rows", Problem: p, Configs: rowsConfigs(name, s[1], map[string]int{"bf16": 2, "f32": 4}[dt])})
			}
		}
	}
	return ps, nil
}

// rowsConfigs are the tiles a user might pick for rows of cols elements:
// the default (4 rows, 128 threads) and the ones that keep a thread's share
// of a block's rows between 8 and 64 elements, so the row stays in
// registers; the softmax steps through up to 1024 columns at a time and
// holds its rows in shared memory (at most 200 KiB).
func rowsConfigs(kernel string, cols, esize int) []kernels.Config {
	bn := 1024
	for cols%bn != 0 && bn > 1 {
		bn /= 2
	}
	var cs []kernels.Config
	for _, bm := range []int{4, 1, 2, 8} {
		for _, threads := range []int{128, 256, 512, 1024} {
			share := bm * cols / threads
			if kernel == "softmax" {
				share = bm * bn / threads
			}
			user := bm == 4 && threads == 128
			if !user && (share < 8 || share > 64) || kernel == "softmax" && bm*cols*esize > 200<<10 {
				continue
			}
			cs = append(cs, kernels.RowsConfig{BM: bm, BN: bn, Threads: threads})
		}
	}
	return cs
}
