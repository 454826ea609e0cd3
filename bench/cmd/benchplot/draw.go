package main

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Sizes of a chart, in points.
const (
	panelWidth  = 235
	panelHeight = 250
	titleHeight = 40
)

// sans is the typeface of every text; the SVG names it (and Arial, its
// metric twin) and the viewer draws it: fonts are not embedded, so the
// files stay small.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// render draws the chart's panels that have results, side by side; false
// if none has.
func (c chart) render(res *results) ([]byte, bool, error) {
	var plots []*plot.Plot
	for _, p := range c.panels {
		pl, err := p.plot(res)
		if err != nil {
			return nil, false, err
		}
		if pl != nil {
			plots = append(plots, pl)
		}
	}
	if len(plots) == 0 {
		return nil, false, nil
	}
	w, h := vg.Length(panelWidth*len(plots)), vg.Length(panelHeight+titleHeight)
	canvas := vgsvg.New(w, h)
	dc := draw.New(canvas)

	title := draw.TextStyle{Color: color.Black, Font: font.From(sans, 13), XAlign: draw.XCenter, YAlign: draw.YTop,
		Handler: plot.DefaultTextHandler}
	dc.FillText(title, vg.Point{X: w / 2, Y: h - 6}, c.title)
	title.Font = font.From(sans, 10)
	title.Color = color.Gray{0x55}
	note := c.note + " · bars: median of the runs · whiskers: 95% confidence interval"
	if len(res.files) > 1 {
		note = fmt.Sprintf("%s · outlined: %s, filled: %s · ~: no significant change · whiskers: 95%% CI",
			c.note, res.files[0], res.files[1])
	}
	dc.FillText(title, vg.Point{X: w / 2, Y: h - 24}, note)

	body := draw.Crop(dc, 0, 0, 0, -titleHeight)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: 8, PadLeft: 4, PadRight: 8}
	for i, tc := range plot.Align([][]*plot.Plot{plots}, tiles, body)[0] {
		plots[i].Draw(tc)
	}
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, false, err
	}
	// Liberation Sans has Arial's metrics, so text laid out for it fits
	// in either; without a fallback, a viewer lacking it draws a serif.
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:Liberation Sans,Arial,Helvetica,sans-serif;")), true, nil
}

// plot draws one panel: per implementation with results, a bar per file,
// in the implementation's colour (outlined for the first of two files,
// filled for the second), labelled with the last file's value and, with
// two files, its change from the first. nil if no file has the benchmark.
func (p panel) plot(res *results) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.title
	if pl.Title.Text == "" {
		pl.Title.Text = p.bench
	}
	pl.Title.TextStyle.Font = font.From(sans, 10)
	pl.Y.Label.Text = p.axis
	if pl.Y.Label.Text == "" {
		pl.Y.Label.Text = p.unit
	}
	pl.Y.Label.TextStyle.Font = font.From(sans, 10)
	pl.Y.Tick.Label.Font = font.From(sans, 9)
	pl.X.Tick.Label.Font = font.From(sans, 9)
	pl.Y.Tick.Marker = scaledTicks{}

	var names []string
	top := 0.0
	for _, im := range impls {
		x := float64(len(names))
		label, groupTop := "", 0.0
		for f := range res.files {
			s, ok := res.summary(f, p.bench, im.name, p.unit)
			if !ok {
				continue
			}
			if err := addBar(pl, x+barOffset(f, len(res.files)), s, im.color, len(res.files) > 1 && f == 0, len(res.files)); err != nil {
				return nil, err
			}
			label = compact(s.Center) // the last file's
			groupTop = math.Max(groupTop, s.Center)
			if !math.IsInf(s.Hi, 0) {
				groupTop = math.Max(groupTop, s.Hi)
			}
		}
		if label == "" {
			continue
		}
		if delta := res.change(p.bench, im.name, p.unit); delta != "" {
			label += "\n" + delta
		}
		if err := addLabel(pl, x, groupTop, label); err != nil {
			return nil, err
		}
		names = append(names, im.label)
		top = math.Max(top, groupTop)
	}
	if len(names) == 0 {
		return nil, nil
	}
	pl.NominalX(names...)
	pl.X.Min, pl.X.Max = -0.6, float64(len(names))-0.4
	pl.Y.Min, pl.Y.Max = 0, top*1.15
	return pl, nil
}

// barOffset places file f's bar beside the others of its implementation.
func barOffset(f, files int) float64 {
	return (float64(f) - float64(files-1)/2) * 0.38
}

// addBar draws a summary as a bar at x with its confidence interval.
func addBar(pl *plot.Plot, x float64, s benchmath.Summary, c color.Color, outlined bool, files int) error {
	width := vg.Points(30)
	if files > 1 {
		width = vg.Points(22)
	}
	bar, err := plotter.NewBarChart(plotter.Values{s.Center}, width)
	if err != nil {
		return err
	}
	bar.XMin = x
	bar.Color = c
	bar.LineStyle.Color = c
	if outlined {
		bar.Color = color.White
		bar.LineStyle.Width = vg.Points(1.5)
	}
	pl.Add(bar)
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) {
		return nil // too few runs for an interval
	}
	eb, err := plotter.NewYErrorBars(errorBar{
		XYs:     plotter.XYs{{X: x, Y: s.Center}},
		YErrors: plotter.YErrors{{Low: s.Center - s.Lo, High: s.Hi - s.Center}},
	})
	if err != nil {
		return err
	}
	eb.LineStyle.Color = color.Gray{0x33}
	eb.CapWidth = vg.Points(6)
	pl.Add(eb)
	return nil
}

// addLabel writes text centred above (x, y).
func addLabel(pl *plot.Plot, x, y float64, text string) error {
	labels, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: y}}, Labels: []string{text}})
	if err != nil {
		return err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].Font = font.From(sans, 8)
		labels.TextStyle[i].XAlign = draw.XCenter
		labels.TextStyle[i].YAlign = draw.YBottom
	}
	labels.Offset = vg.Point{Y: 3}
	pl.Add(labels)
	return nil
}

// errorBar is one bar's confidence interval.
type errorBar struct {
	plotter.XYs
	plotter.YErrors
}

// scaledTicks are gonum's default ticks, labelled as the bars are.
type scaledTicks struct{}

func (scaledTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = compact(ticks[i].Value)
		}
	}
	return ticks
}

// compact writes v as benchstat does, with an SI prefix, but without
// trailing zeros: 4, 63.65k, 1.2M.
func compact(v float64) string {
	s := benchunit.Scale(v, benchunit.Decimal)
	num := strings.TrimRight(s, "kMGTPE")
	if strings.Contains(num, ".") {
		return strings.TrimRight(strings.TrimRight(num, "0"), ".") + s[len(num):]
	}
	return s
}
