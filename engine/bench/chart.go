package bench

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// strategyColors gives each strategy the same colour in every panel.
var strategyColors = map[string]color.Color{
	"optimal": color.RGBA{0x22, 0x22, 0x22, 0xff},
	"depth":   color.RGBA{0x1f, 0x77, 0xb4, 0xff},
	"length":  color.RGBA{0xd6, 0x27, 0x28, 0xff},
	"batch":   color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	"partial": color.RGBA{0xff, 0x7f, 0x0e, 0xff},
}

// drawChart draws the benchmark's chart as a PNG: one panel per r
// (Figures 6.5 and 6.6) and, when measured, one for Figure 6.13.
func drawChart(w io.Writer, res *StrategiesResult) error {
	var panels []*plot.Plot
	var robots []int
	for _, c := range res.Curves {
		if len(robots) == 0 || robots[len(robots)-1] != c.Robots {
			robots = append(robots, c.Robots)
		}
	}
	for _, r := range robots {
		p := coveragePlot(fmt.Sprintf("Simulated, r = %d", r))
		for _, c := range res.Curves {
			if c.Robots == r {
				if err := addCurve(p, c.Strategy, c.Points, strategyColors[c.Strategy], false); err != nil {
					return err
				}
			}
		}
		panels = append(panels, p)
	}
	if len(res.RealCurve.Points) > 0 {
		p := coveragePlot(fmt.Sprintf("Real crawl vs simulated, %s, r = %d", res.RealCurve.Strategy, res.RealCurve.Robots))
		if err := addCurve(p, "real crawl", res.RealCurve.Points, strategyColors[res.RealCurve.Strategy], false); err != nil {
			return err
		}
		if err := addCurve(p, "simulated", res.SimCurve.Points, color.Black, true); err != nil {
			return err
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return fmt.Errorf("bench: nothing to draw")
	}
	cols := min(2, len(panels))
	rows := (len(panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, p := range panels {
		grid[i/cols][i%cols] = p
	}
	return drawGrid(w, grid, 9*vg.Centimeter, 0.75)
}

// drawGrid writes the panels of grid (rows of plots; nil leaves a tile
// empty) as one PNG, each tile wide and aspect·tile high.
func drawGrid(w io.Writer, grid [][]*plot.Plot, tile vg.Length, aspect float64) error {
	rows, cols := len(grid), 0
	for _, row := range grid {
		cols = max(cols, len(row))
	}
	img := vgimg.NewWith(vgimg.UseWH(vg.Length(cols)*tile, vg.Length(rows)*tile*vg.Length(aspect)), vgimg.UseDPI(96))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 4 * vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

func coveragePlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "pages fetched (fraction of the collection)"
	p.Y.Label.Text = "cumulative oracle PageRank"
	p.X.Min, p.X.Max = 0, 1
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = false
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	return p
}

func addCurve(p *plot.Plot, name string, pts []Point, c color.Color, dashed bool) error {
	xys := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		xys[i].X, xys[i].Y = pt.Fraction, pt.Coverage
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if c == nil {
		c = color.Gray{0x80}
	}
	l.LineStyle.Color = c
	l.LineStyle.Width = vg.Points(1.2)
	if dashed {
		l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}
