// Command chart draws compare.sh's results as a PNG bar chart: for each
// model and thread count, each runtime's median latency (over rounds)
// relative to kiln's (kiln = 1, lower is faster), titled with the host
// (results.jsonl's first line, from host.py: CPU, SIMD level, cores). It
// is a module of its own so that gonum's plot package stays out of
// kiln's dependencies.
//
//	go run . ../results.jsonl ../results.png
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// record is one line of results.jsonl: a measurement, or with Kind
// "host" the host's description, with Kind "torch-calibration" one of
// PyTorch's calibration runs, or with Kind "cores" where the host ran a
// case's two threads (bench/cores; neither is drawn).
type record struct {
	Kind    string `json:"kind"`
	Title   string `json:"title"`
	Case    string `json:"case"`
	Threads int    `json:"threads"`
	Runtime string `json:"runtime"`
	Result  struct {
		MedianMs float64 `json:"median_ms"`
	} `json:"result"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: chart results.jsonl out.png")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	type key struct {
		c string
		t int
	}
	var groups []key
	all := map[key]map[string][]float64{} // one median latency per round
	med := map[key]map[string]float64{}
	host := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		switch r.Kind {
		case "host":
			host = r.Title
			continue
		case "":
		default:
			continue
		}
		k := key{r.Case, r.Threads}
		if all[k] == nil {
			all[k] = map[string][]float64{}
			groups = append(groups, k)
		}
		all[k][r.Runtime] = append(all[k][r.Runtime], r.Result.MedianMs)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for k, rts := range all {
		med[k] = map[string]float64{}
		for rt, v := range rts {
			med[k][rt] = median(v)
		}
	}
	p := plot.New()
	p.Title.Text = "median latency relative to kiln (lower is faster)"
	if host != "" {
		p.Title.Text = host + ": " + p.Title.Text
	}
	p.Y.Label.Text = "time / kiln's time"
	runtimes := []struct {
		name, label string
		col         color.RGBA
	}{
		{"kiln", "kiln", color.RGBA{200, 80, 30, 255}},
		{"ort", "ONNX Runtime", color.RGBA{40, 90, 170, 255}},
		{"torch", "PyTorch", color.RGBA{120, 120, 120, 255}},
	}
	w := vg.Points(12)
	var names []string
	for _, g := range groups {
		// "resnet18 b1" -> "resnet18\nb1, 1 thr": long model names fit
		m, set, _ := strings.Cut(g.c, " ")
		names = append(names, fmt.Sprintf("%s\n%s, %d thr", m, set, g.t))
	}
	for i, rt := range runtimes {
		vals := make(plotter.Values, len(groups))
		for j, g := range groups {
			if k := med[g]["kiln"]; k > 0 {
				vals[j] = med[g][rt.name] / k
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bars.Color = rt.col
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(i-1)
		p.Add(bars)
		p.Legend.Add(rt.label, bars)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.NominalX(names...)
	// half a group's margin either side, so the outer labels are not cut
	p.X.Min, p.X.Max = -0.6, float64(len(groups))-0.4
	return p.Save(vg.Length(90*len(groups))+vg.Points(80), 4*vg.Inch, out)
}

// median of the rounds' values (the mean of the middle two for an even
// count), as report.py gives them.
func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
