package chart

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
)

// Colors of the implementations; others take the fallback palette in turn.
var colors = map[string]string{
	"tilego":         "#d1495b",
	"sdpa-flash":     "#2e86ab",
	"sdpa-cudnn":     "#66a182",
	"sdpa-efficient": "#8d6a9f",
	"flex":           "#edae49",
	"cublas":         "#00798c",
}

var fallback = []string{"#6c757d", "#a05195", "#f95d6a", "#2f4b7c", "#ffa600", "#665191"}

func (c *Chart) color(name string) string {
	if col, ok := colors[name]; ok {
		return col
	}
	n := 0
	for _, s := range c.Series {
		if s == name {
			break
		}
		if _, ok := colors[s]; !ok {
			n++
		}
	}
	return fallback[n%len(fallback)]
}

func legendName(s string) string {
	if n, ok := Names[s]; ok {
		return n
	}
	return s
}

// niceScale is an axis maximum at or above max and a tick step: 1, 2, 2.5
// or 5 times a power of ten, about 5 to 8 ticks.
func niceScale(max float64) (top, step float64) {
	if !(max > 0) || math.IsInf(max, 0) {
		return 1, 0.2
	}
	raw := max / 6
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * p; step >= raw {
			break
		}
	}
	top = math.Ceil(max/step) * step
	if top < max*1.04 { // headroom above the tallest bar
		top += step
	}
	return top, step
}

func fmtNum(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".")
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// svgWriter accumulates the document, keeping the first write error.
type svgWriter struct {
	w   *bufio.Writer
	err error
}

func (s *svgWriter) f(format string, args ...any) {
	if s.err == nil {
		_, s.err = fmt.Fprintf(s.w, format, args...)
	}
}

// text writes a <text> element; attrs are raw attribute text.
func (s *svgWriter) text(x, y float64, attrs, body string) {
	s.f(`<text x="%.1f" y="%.1f" %s>%s</text>`+"\n", x, y, attrs, esc(body))
}

// Layout, in pixels.
const (
	marginL    = 64.0
	marginR    = 16.0
	gapX       = 28.0
	gapY       = 22.0
	panelHead  = 24.0  // panel title above the plot
	plotH      = 210.0 // plot area
	tickRoom   = 22.0  // category labels below the plot
	yTickRoom  = 34.0  // tick labels left of each plot
	legendRowH = 22.0
	maxBarW    = 36.0 // bars stay bars when a panel has one category
)

// WriteSVG draws the chart as a standalone SVG document.
func (c *Chart) WriteSVG(out io.Writer) error {
	if len(c.Panels) == 0 {
		return fmt.Errorf("chart: nothing to draw")
	}
	W := float64(c.Width)
	if W <= 0 {
		W = 1200
	}
	cols := c.Columns
	if cols <= 0 {
		cols = min(3, len(c.Panels))
	}
	rows := (len(c.Panels) + cols - 1) / cols
	pw := (W - marginL - marginR - float64(cols-1)*gapX) / float64(cols)

	// Legend items laid out in rows.
	type item struct {
		name string
		x, y float64
	}
	var items []item
	lx, ly := marginL, 84.0
	for _, s := range c.Series {
		wd := 26 + 7.2*float64(len([]rune(legendName(s)))) + 22
		if lx+wd > W-marginR && lx > marginL {
			lx, ly = marginL, ly+legendRowH
		}
		items = append(items, item{s, lx, ly})
		lx += wd
	}
	gridTop := ly + 22
	ph := panelHead + plotH + tickRoom
	H := gridTop + float64(rows)*ph + float64(rows-1)*gapY + 40

	maxV := 0.0
	for _, p := range c.Panels {
		for _, s := range p.Series {
			for _, v := range s.Values {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					maxV = math.Max(maxV, v)
				}
			}
		}
	}
	top, step := niceScale(maxV)

	s := &svgWriter{w: bufio.NewWriter(out)}
	s.f(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	s.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif">`+"\n", W, H, W, H)
	s.f(`<title>%s</title>`+"\n", esc(c.Title))
	s.f(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	s.text(marginL, 34, `font-size="20" font-weight="bold" fill="#222"`, c.Title)
	if c.Subtitle != "" {
		s.text(marginL, 58, `font-size="13" fill="#555"`, c.Subtitle)
	}
	s.f(`<g class="legend">` + "\n")
	for _, it := range items {
		s.f(`<g data-legend="%s">`, esc(it.name))
		if c.Kind == Lines {
			s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"/><circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`,
				it.x, it.y-4, it.x+20, it.y-4, c.color(it.name), it.x+10, it.y-4, c.color(it.name))
		} else {
			s.f(`<rect x="%.1f" y="%.1f" width="16" height="12" rx="2" fill="%s"/>`, it.x, it.y-11, c.color(it.name))
		}
		s.f("</g>\n")
		s.text(it.x+26, it.y, `font-size="13" fill="#222"`, legendName(it.name))
	}
	s.f("</g>\n")

	// The shared axis labels.
	gridH := float64(rows)*ph + float64(rows-1)*gapY
	s.text(18, gridTop+gridH/2, fmt.Sprintf(`font-size="13" fill="#333" text-anchor="middle" transform="rotate(-90 18 %.1f)"`, gridTop+gridH/2), c.YLabel)
	s.text(marginL+(W-marginL-marginR)/2, H-12, `font-size="13" fill="#333" text-anchor="middle"`, c.XLabel)

	for i, p := range c.Panels {
		px := marginL + float64(i%cols)*(pw+gapX)
		py := gridTop + float64(i/cols)*(ph+gapY)
		c.panel(s, p, px, py, pw, top, step)
	}
	s.f("</svg>\n")
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
}

func (c *Chart) panel(s *svgWriter, p *Panel, px, py, pw, top, step float64) {
	x0, x1 := px+yTickRoom, px+pw
	y1 := py + panelHead + plotH // the bottom of the plot
	yOf := func(v float64) float64 { return y1 - v/top*plotH }
	s.f(`<g class="panel" data-panel="%s">`+"\n", esc(p.Title))
	s.text((x0+x1)/2, py+15, `font-size="14" font-weight="bold" fill="#222" text-anchor="middle"`, p.Title)
	for v := 0.0; v <= top+step/2; v += step {
		y := yOf(v)
		stroke := "#e3e3e3"
		if v == 0 {
			stroke = "#888"
		}
		s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`+"\n", x0, y, x1, y, stroke)
		s.text(x0-5, y+4, `font-size="11" fill="#555" text-anchor="end"`, fmtNum(v))
	}
	n := len(p.Categories)
	if n == 0 {
		s.f("</g>\n")
		return
	}
	gw := (x1 - x0) / float64(n)
	for i, cat := range p.Categories {
		s.text(x0+gw*(float64(i)+0.5), y1+16, `font-size="12" fill="#333" text-anchor="middle"`, cat)
	}
	ns := len(p.Series)
	for k, sr := range p.Series {
		col := c.color(sr.Name)
		s.f(`<g class="series" data-series="%s" fill="%s">`+"\n", esc(sr.Name), col)
		if c.Kind == Lines {
			var pts []string
			flush := func() {
				if len(pts) > 1 {
					s.f(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2.5"/>`+"\n", strings.Join(pts, " "), col)
				}
				pts = pts[:0]
			}
			for i, v := range sr.Values {
				if math.IsNaN(v) {
					flush()
					continue
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x0+gw*(float64(i)+0.5), yOf(v)))
			}
			flush()
		}
		for i, v := range sr.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			tip := fmt.Sprintf("%s, %s, %s: %.1f TFLOP/s", legendName(sr.Name), p.Title, p.Categories[i], v)
			if c.Kind == Lines {
				s.f(`<circle cx="%.1f" cy="%.1f" r="3.5"><title>%s</title></circle>`+"\n", x0+gw*(float64(i)+0.5), yOf(v), esc(tip))
				continue
			}
			bw := math.Min(gw*0.82/float64(ns), maxBarW)
			bx := x0 + gw*(float64(i)+0.5) + (float64(k)-float64(ns)/2)*bw
			h := math.Max(y1-yOf(v), 0.5)
			s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`+"\n", bx, y1-h, math.Max(bw-1, 0.5), h, esc(tip))
		}
		s.f("</g>\n")
	}
	s.f("</g>\n")
}
