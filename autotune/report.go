package autotune

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tilego/tilego/kernels"
)

// progress draws a one-line bar, redrawn in place with \r:
//
//	measuring [=========>          ] 45/120  12s of 60s  best 0.245 ms m=128 n=64 stages=2 threads=256
type progress struct {
	w      io.Writer
	total  int
	budget time.Duration
	start  time.Time
	last   int // length of the last line drawn, to blank its tail
}

func newProgress(w io.Writer, total int, budget time.Duration, start time.Time) *progress {
	return &progress{w: w, total: total, budget: budget, start: start}
}

const barWidth = 24

func (p *progress) draw(phase string, done int, best *Candidate) {
	if p.w == nil {
		return
	}
	filled := 0
	if p.total > 0 {
		filled = barWidth * done / p.total
	}
	bar := strings.Repeat("=", filled)
	if filled < barWidth {
		bar += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	line := fmt.Sprintf("%-9s [%s] %d/%d  %s", phase, bar, done, p.total, round(time.Since(p.start)))
	if p.budget > 0 {
		line += " of " + round(p.budget)
	}
	if best != nil {
		line += fmt.Sprintf("  best %.3f ms %s", best.Time.MS(), kernels.ConfigFields(best.Config))
	}
	const maxLine = 118
	if len(line) > maxLine {
		line = line[:maxLine-1] + "…"
	}
	pad := ""
	if n := p.last - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.last = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
}

func (p *progress) finish() {
	if p.w != nil && p.last > 0 {
		fmt.Fprintln(p.w)
	}
}

func round(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// WriteSummary prints the outcome: the counts, why measuring stopped, the
// five fastest correct configs, then the reasons of the wrong and failed
// ones (the first few of each).
func (r *Result) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "tuned %s  %s\n", r.Kernel, r.Shape)
	fmt.Fprintf(w, "  on %s, %s, codegen %s, in %s (%s of it waiting for compiles)\n", r.Target.GPU, r.Target.Compiler, r.Target.Codegen, round(r.Elapsed), round(r.CompileWait))
	fmt.Fprintf(w, "  %s\n  stopped: %s\n", r.counts(), r.Stop)
	if d := r.Default(); d != nil && r.Best != nil {
		fmt.Fprintf(w, "  default %s: %.4f ms; best %.4f ms (%.2fx)\n", kernels.ConfigFields(d.Config), d.Time.MS(), r.Best.Time.MS(), d.Time.MS()/r.Best.Time.MS())
	}
	top := r.Top(5)
	if len(top) > 0 {
		fmt.Fprintf(w, "\n  %-4s %9s %9s %8s %5s %6s  %s\n", "rank", "ms", "spread", "TFLOP/s", "regs", "local", "config")
		for i, c := range top {
			fmt.Fprintf(w, "  %-4d %9.4f %9.4f %8.1f %5d %6d  %s\n", i+1, c.Time.MS(), c.Time.Spread.Seconds()*1e3, c.TFLOPs, c.Regs, c.Local, kernels.ConfigFields(c.Config))
		}
	}
	for _, s := range []Status{Wrong, Failed} {
		shown := 0
		for _, c := range r.Candidates {
			if c.Status != s {
				continue
			}
			if shown == 0 {
				fmt.Fprintf(w, "\n  %s:\n", s)
			}
			if shown == 3 {
				fmt.Fprintf(w, "    ... %d more\n", r.Count(s)-3)
				break
			}
			fmt.Fprintf(w, "    %s: %s\n", kernels.ConfigFields(c.Config), brief(c.Reason))
			shown++
		}
	}
}

// brief is a reason on one line: its first, and for a compile error whose
// first line only names the call, the compiler's first error line too.
func brief(reason string) string {
	first, rest, more := strings.Cut(reason, "\n")
	if !more {
		return first
	}
	for _, l := range strings.Split(rest, "\n") {
		if strings.Contains(strings.ToLower(l), "error") {
			return first + " ... " + strings.TrimSpace(l)
		}
	}
	return first + " ..."
}
