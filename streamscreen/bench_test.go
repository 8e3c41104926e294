package streamscreen

import (
	"context"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/internal/cputime"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/defaults"
)

// BenchmarkRun measures the screening of one streamed answer with the
// default endpoint's output scanners (secrets), as the fixed window did it
// ("window": no release points, stream_hold_back 256), with release points
// screening 256 bytes of released context each time ("release-points"),
// and with release points screening only the unreleased text and the
// detectors' lookbehind ("incremental", the default), for the benchmark's
// streamed answer (4 events of ~60 bytes) and for 40 six-byte word events,
// each event arriving on its own.
func BenchmarkRun(b *testing.B) {
	stages, err := defaults.Stages()
	if err != nil {
		b.Fatal(err)
	}
	p, err := scanner.NewPipeline(stages, scanner.Options{})
	if err != nil {
		b.Fatal(err)
	}
	const text = "Here is a short plan. Water the herbs in the morning, mix a layer of compost into the raised bed each spring, and rotate beans, squash and leafy greens between the beds every season. Keep notes on what grows well so next year is easier."
	words := strings.SplitAfter(text, " ")
	var four []string
	for i := 0; i < len(words); i += (len(words) + 3) / 4 {
		four = append(four, strings.Join(words[i:min(i+(len(words)+3)/4, len(words))], ""))
	}
	var forty []string
	for i := range 40 {
		forty = append(forty, " "+strings.Fields(text)[i%len(strings.Fields(text))])
	}
	chat := builders[format.NameOpenAIChat]
	f, err := format.ByName(format.NameOpenAIChat)
	if err != nil {
		b.Fatal(err)
	}
	for _, answer := range []struct {
		name   string
		chunks []string
	}{{"4-events", four}, {"40-words", forty}} {
		events := eventsOf(b, f, chat(answer.chunks))
		for _, mode := range []string{"window", "release-points", "incremental"} {
			b.Run(answer.name+"/"+mode, func(b *testing.B) {
				opts := releaseOptions(p)
				switch mode {
				case "window":
					opts.Hold, opts.Lookbehind = nil, 0
				case "release-points":
					opts.Lookbehind = 0
				}
				opts.Emit = func([]byte) error { return nil }
				b.ReportAllocs()
				cpu := cputime.Process()
				for b.Loop() {
					// One event per upstream write: the slow stream,
					// every event screened on its own.
					opts.Stream = f.NewStream(&perEvent{events: events})
					if _, err := Run(context.Background(), opts); err != nil {
						b.Fatal(err)
					}
				}
				// CPU time rather than wall time: on a shared machine the
				// wall clock measures the neighbours.
				b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
