package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// A chart is one PNG: a title, a legend of series (systems) and one or
// more panels of grouped bars, drawn with the standard library's image
// packages and a fixed 7×13 bitmap font.
type chart struct {
	title  string
	series []string // legend order; bars refer to these by index
	panels []panel
}

type panel struct {
	ylabel string
	log    bool // log10 axis, for values spanning milliseconds to minutes
	groups []barGroup
	format func(float64) string // a bar's value label
}

type barGroup struct {
	label string
	bars  []barValue
}

type barValue struct {
	series int
	value  float64
	note   string // replaces the value label (e.g. "skipped")
}

var palette = []color.RGBA{
	{0x1b, 0x7f, 0x3b, 0xff}, // dark green
	{0xe6, 0x8a, 0x00, 0xff}, // orange
	{0xc9, 0x3c, 0x20, 0xff}, // red
	{0x1f, 0x5f, 0xbf, 0xff}, // blue
	{0x7b, 0x3f, 0xa0, 0xff}, // purple
	{0x55, 0x55, 0x55, 0xff},
}

var (
	ink   = color.RGBA{0x22, 0x22, 0x22, 0xff}
	grid  = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	paper = color.RGBA{0xff, 0xff, 0xff, 0xff}
)

const (
	chartW     = 960
	panelH     = 300
	marginL    = 90
	marginR    = 20
	headerH    = 60
	panelGapH  = 50
	charWidth  = 7
	lineHeight = 13
)

func (c chart) render(path string) error {
	h := headerH + len(c.panels)*(panelH+panelGapH) + 10
	img := image.NewRGBA(image.Rect(0, 0, chartW, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{paper}, image.Point{}, draw.Src)
	text(img, marginL, 18, c.title, ink)
	// Legend.
	x := marginL
	for i, s := range c.series {
		fill(img, x, 30, x+12, 42, palette[i%len(palette)])
		text(img, x+16, 40, s, ink)
		x += 16 + len(s)*charWidth + 24
	}
	for i, p := range c.panels {
		top := headerH + i*(panelH+panelGapH) + 20
		p.render(img, top)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (p panel) render(img *image.RGBA, top int) {
	bottom := top + panelH - 40 // room for group labels
	left, right := marginL, chartW-marginR
	text(img, 8, top-16, p.ylabel, ink)

	hi := 0.0
	lo := math.Inf(1)
	for _, g := range p.groups {
		for _, b := range g.bars {
			if b.value > 0 {
				hi = max(hi, b.value)
				lo = min(lo, b.value)
			}
		}
	}
	if hi == 0 {
		hi, lo = 1, 1
	}
	var scale func(float64) float64 // value → 0..1
	var ticks []float64
	if p.log {
		lmin := math.Floor(math.Log10(lo))
		lmax := math.Ceil(math.Log10(hi))
		if lmax == lmin {
			lmax++
		}
		scale = func(v float64) float64 {
			if v <= 0 {
				return 0
			}
			return max(0, (math.Log10(v)-lmin)/(lmax-lmin))
		}
		for e := lmin; e <= lmax; e++ {
			ticks = append(ticks, math.Pow(10, e))
		}
	} else {
		step := niceStep(hi / 5)
		top := math.Ceil(hi/step) * step
		scale = func(v float64) float64 { return v / top }
		for v := 0.0; v <= top+step/2; v += step {
			ticks = append(ticks, v)
		}
	}
	ph := float64(bottom - top)
	for _, t := range ticks {
		y := bottom - int(scale(t)*ph)
		hline(img, left, right, y, grid)
		label := p.format(t)
		text(img, left-6-len(label)*charWidth, y+4, label, ink)
	}
	hline(img, left, right, bottom, ink)
	vline(img, left, top, bottom, ink)

	if len(p.groups) == 0 {
		return
	}
	gw := (right - left) / len(p.groups)
	for gi, g := range p.groups {
		gx := left + gi*gw
		n := max(1, len(g.bars))
		bw := min(60, (gw-20)/n)
		x0 := gx + (gw-bw*n)/2
		for bi, b := range g.bars {
			bx := x0 + bi*bw
			y := bottom - int(scale(b.value)*ph)
			if b.value > 0 {
				fill(img, bx+2, y, bx+bw-2, bottom, palette[b.series%len(palette)])
			}
			label := b.note
			if label == "" {
				label = p.format(b.value)
			}
			// Labels alternate height so that neighbours do not overlap.
			ly := y - 4 - (bi%2)*lineHeight
			text(img, bx+bw/2-len(label)*charWidth/2, ly, label, ink)
		}
		text(img, gx+gw/2-len(g.label)*charWidth/2, bottom+18, g.label, ink)
	}
}

// niceStep rounds a raw tick step to 1, 2 or 5 × 10^k.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / e; {
	case f <= 1:
		return e
	case f <= 2:
		return 2 * e
	case f <= 5:
		return 5 * e
	}
	return 10 * e
}

func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func fill(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	draw.Draw(img, image.Rect(x0, y0, x1, y1), &image.Uniform{c}, image.Point{}, draw.Src)
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color) { fill(img, x0, y, x1, y+1, c) }
func vline(img *image.RGBA, x, y0, y1 int, c color.Color) { fill(img, x, y0, x+1, y1, c) }

// Value formats for axes and labels.
func fmtCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func fmtMillis(v float64) string { // v in milliseconds
	switch {
	case v == 0:
		return "0"
	case v >= 10_000:
		return fmt.Sprintf("%.0fs", v/1000)
	case v >= 1000:
		return fmt.Sprintf("%.1fs", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.0fms", v)
	case v >= 1:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.2fms", v)
}

func fmtPercent(v float64) string { return fmt.Sprintf("%.0f%%", v) }
func fmtMiB(v float64) string     { return fmt.Sprintf("%.0f", v) }
