package layout

import (
	"fmt"
	"slices"
)

// WaveSize is the number of lanes of a CDNA3 wave; the MFMA layouts are
// for wave64 only.
const WaveSize = 64

// MFMAInst is a CDNA3 (gfx942) wave64 matrix fused multiply-add with f16
// or bf16 inputs and f32 accumulators, D[M×N] = A[M×K]·B[K×N] + C, one
// block. The f16 and bf16 forms place their operands the same way.
type MFMAInst struct {
	Name    string // gfx942 mnemonic
	M, N, K int
}

// The instructions the MFMA layouts describe. On gfx90a the bf16 ones are
// spelled v_mfma_f32_16x16x16bf16_1k and v_mfma_f32_32x32x8bf16_1k.
var (
	MFMA16x16x16F16  = MFMAInst{"v_mfma_f32_16x16x16_f16", 16, 16, 16}
	MFMA16x16x16BF16 = MFMAInst{"v_mfma_f32_16x16x16_bf16", 16, 16, 16}
	MFMA32x32x8F16   = MFMAInst{"v_mfma_f32_32x32x8_f16", 32, 32, 8}
	MFMA32x32x8BF16  = MFMAInst{"v_mfma_f32_32x32x8_bf16", 32, 32, 8}
)

var mfmaInsts = []MFMAInst{MFMA16x16x16F16, MFMA16x16x16BF16, MFMA32x32x8F16, MFMA32x32x8BF16}

func (in MFMAInst) check() error {
	if !slices.Contains(mfmaInsts, in) {
		return fmt.Errorf("no MFMA layout for %+v", in)
	}
	return nil
}

// groups is how many lane groups a wave splits into: lanes l and l+M sit
// at the same row of A (column of B and of the accumulator; M = N for
// every instruction here) one group apart.
func (in MFMAInst) groups() int { return WaveSize / in.M }

// OperandElems is the number of A (or B) elements a lane holds for one of
// the instructions above: consecutive k, in the low then high half of
// each 32-bit register.
func (in MFMAInst) OperandElems() int { return in.K / in.groups() }

// AccRegs is the number of f32 accumulator registers a lane holds for one
// of the instructions above.
func (in MFMAInst) AccRegs() int { return in.M * in.N / WaveSize }

// Waves is how an MFMA Gemm's waves tile its M×N output: wave w (threads
// 64w to 64w+63) sits at (w % M, w / M).
type Waves struct{ M, N int }

func (w Waves) check() error {
	if w.M < 1 || w.N < 1 {
		return fmt.Errorf("%d×%d waves", w.M, w.N)
	}
	return nil
}

// MFMAAccumulator is the layout of an M×N f32 accumulator of in when the
// waves split M and N evenly. In each in.M×in.N tile, lane l holds column
// l % N and, in register r, row 4(l/N) + r%4 (16×16) or
// 8(r/4) + 4(l/32) + r%4 (32×32): runs of four rows, the lane groups
// taking turns. Registers run over those in.AccRegs() values, then the
// wave's n tiles, then its m tiles, as the mma.sync Accumulator's do.
func MFMAAccumulator(m, n int, in MFMAInst, w Waves) (*Fragment, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if err := w.check(); err != nil {
		return nil, err
	}
	if m%(in.M*w.M) != 0 || n%(in.N*w.N) != 0 {
		return nil, fmt.Errorf("a %d×%d accumulator cannot be split over %d×%d waves in %d×%d tiles (%s)", m, n, w.M, w.N, in.M, in.N, in.Name)
	}
	wm, wn := m/w.M, n/w.N
	g := in.groups()
	return &Fragment{
		Shape: []int{m, n},
		Thread: []Digit{
			{in.N, 1, 1}, {g, 0, 4}, // lane
			{w.M, 0, wm}, {w.N, 1, wn}, // wave
		},
		Reg: []Digit{{4, 0, 1}, {in.M / (4 * g), 0, 4 * g}, {wn / in.N, 1, in.N}, {wm / in.M, 0, in.M}},
	}, nil
}

// MFMAAccumulatorT is the layout of an m×n accumulator computed
// transposed: the MFMA multiplies Bᵀ·Aᵀ into Cᵀ (the operands' registers
// swapped), so lane l holds C's row l % 16 and four consecutive columns
// 4·(l / 16) + i: an A operand's placement (MFMAOperandA with K = n, when
// the waves do not split n), which lets C feed the next multiply as its A
// from registers. Registers and waves are ordered as MFMAAccumulator's.
func MFMAAccumulatorT(m, n int, in MFMAInst, w Waves) (*Fragment, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if err := w.check(); err != nil {
		return nil, err
	}
	if in.M != in.N || m%(in.M*w.M) != 0 || n%(in.N*w.N) != 0 {
		return nil, fmt.Errorf("a %d×%d transposed accumulator cannot be split over %d×%d waves in %d×%d tiles (%s)", m, n, w.M, w.N, in.M, in.N, in.Name)
	}
	wm, wn := m/w.M, n/w.N
	g := in.groups()
	return &Fragment{
		Shape: []int{m, n},
		Thread: []Digit{
			{in.M, 0, 1}, {g, 1, 4}, // lane
			{w.M, 0, wm}, {w.N, 1, wn}, // wave
		},
		Reg: []Digit{{4, 1, 1}, {in.N / (4 * g), 1, 4 * g}, {wn / in.N, 1, in.N}, {wm / in.M, 0, in.M}},
	}, nil
}

// MFMAOperandA is the layout an M×K A operand must have in registers for
// in: lane l holds row l % M and, per instruction, in.OperandElems()
// consecutive k starting at that count times l/M. Registers (16-bit
// elements) run over those, then the K steps, then the wave's m tiles; the
// registers of K step s of an m tile are s·OperandElems() onwards. Waves
// along N need all of A's rows of their M slice, so they hold copies.
//
// kPack > 1 packs kPack K steps per lane: each lane holds
// kPack·OperandElems() consecutive k of every kPack·in.K, so one wider
// shared-memory read (16 bytes for kPack 2) feeds kPack instructions. Step
// s then multiplies k that are not consecutive, which is right as long as
// B is packed the same way: the dot product over K does not depend on the
// order of its terms. The register numbering does not change with kPack.
func MFMAOperandA(m, k int, in MFMAInst, w Waves, kPack int) (*Fragment, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if err := w.check(); err != nil {
		return nil, err
	}
	if kPack < 1 || m%(in.M*w.M) != 0 || k%(in.K*kPack) != 0 {
		return nil, fmt.Errorf("a %d×%d A operand cannot be split over %d waves along M in %d×%d tiles, %d K steps packed (%s)", m, k, w.M, in.M, in.K*kPack, kPack, in.Name)
	}
	wm, kl, ks := m/w.M, in.OperandElems()*kPack, in.K*kPack
	return &Fragment{
		Shape:  []int{m, k},
		Thread: []Digit{{in.M, 0, 1}, {in.groups(), 1, kl}, {w.M, 0, wm}, {w.N, -1, 0}},
		Reg:    []Digit{{kl, 1, 1}, {k / ks, 1, ks}, {wm / in.M, 0, in.M}},
	}, nil
}

// MFMAOperandB is the layout a K×N B operand must have in registers for
// in: B's columns take A's rows' place (lane l holds column l % N) and
// everything else is as MFMAOperandA says, kPack included. Waves along M
// hold copies.
func MFMAOperandB(k, n int, in MFMAInst, w Waves, kPack int) (*Fragment, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if err := w.check(); err != nil {
		return nil, err
	}
	if kPack < 1 || n%(in.N*w.N) != 0 || k%(in.K*kPack) != 0 {
		return nil, fmt.Errorf("a %d×%d B operand cannot be split over %d waves along N in %d×%d tiles, %d K steps packed (%s)", k, n, w.N, in.K*kPack, in.N, kPack, in.Name)
	}
	wn, kl, ks := n/w.N, in.OperandElems()*kPack, in.K*kPack
	return &Fragment{
		Shape:  []int{k, n},
		Thread: []Digit{{in.N, 1, 1}, {in.groups(), 0, kl}, {w.M, -1, 0}, {w.N, 1, wn}},
		Reg:    []Digit{{kl, 0, 1}, {k / ks, 0, ks}, {wn / in.N, 1, in.N}},
	}, nil
}
