package defaults

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/internal/cputime"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

// The engine's latency targets are stated for the default endpoint config:
// a 2 KB prompt screened in <= 50 us with <= 20 allocations, 16 KB in
// <= 300 us, and a 20-turn conversation with only its last turn new (the
// verdict cache warm) in <= 2x one turn. These benchmarks measure exactly
// that; run them with -count and compare with benchstat.

// prompt returns about n bytes of an ordinary, clean ASCII prompt: prose
// with numbers, a list and a little code, the mix a coding or office
// assistant sees. Nothing in it should be detected.
func prompt(n int) string {
	return scannertest.Fill(strings.Join([]string{
		"I am preparing the quarterly report for our team and need help structuring it. " +
			"The revenue grew 12% compared with the previous quarter, mostly because two large customers renewed early. " +
			"Costs went up as well: we hired three engineers and moved the build servers to a new data centre.\n\n",
		"Here is the outline I have so far:\n" +
			"1. Summary of the quarter, with the main numbers.\n" +
			"2. Product updates: the new billing page, faster search and the mobile release.\n" +
			"3. Risks for next quarter, including the migration of the old invoicing system.\n\n",
		"Could you also review this function? It should return the average of a list, but the tests fail for empty input:\n\n" +
			"def average(values):\n    total = sum(values)\n    return total / len(values)\n\n",
		"Please keep the tone friendly but professional, use short paragraphs, and suggest a title. " +
			"The audience is the whole company, so avoid internal jargon and explain acronyms the first time they appear. " +
			"If something in my notes is unclear, ask me before making assumptions.\n\n",
	}, ""), n)
}

// promptOtherLanguage returns about n bytes of the same prompt in Spanish:
// a prompt in another language than English is also judged on its English
// gloss by prompt_injection, which costs more than an English one.
func promptOtherLanguage(n int) string {
	return scannertest.Fill(strings.Join([]string{
		"Estoy preparando el informe trimestral de nuestro equipo y necesito ayuda para estructurarlo. " +
			"Los ingresos crecieron un 12% respecto al trimestre anterior, sobre todo porque dos grandes clientes renovaron antes de tiempo. " +
			"Los costes también subieron: contratamos a tres ingenieros y trasladamos los servidores de compilación a un nuevo centro de datos.\n\n",
		"Este es el esquema que tengo por ahora:\n" +
			"1. Resumen del trimestre, con las cifras principales.\n" +
			"2. Novedades del producto: la nueva página de facturación, una búsqueda más rápida y la versión móvil.\n" +
			"3. Riesgos para el próximo trimestre, incluida la migración del antiguo sistema de facturas.\n\n",
		"¿Podrías revisar también esta función? Debería devolver la media de una lista, pero las pruebas fallan con una lista vacía:\n\n" +
			"def average(values):\n    total = sum(values)\n    return total / len(values)\n\n",
		"Mantén un tono cercano pero profesional, usa párrafos cortos y sugiere un título. " +
			"El público es toda la empresa, así que evita la jerga interna y explica las siglas la primera vez que aparezcan. " +
			"Si algo de mis notas no está claro, pregúntame antes de suponer nada.\n\n",
	}, ""), n)
}

func newPipeline(b *testing.B, opts scanner.Options) *scanner.Pipeline {
	b.Helper()
	p, err := Pipeline(opts)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// screen runs one screening and fails the benchmark on anything but a pass,
// so a benchmark never silently measures a short-circuited block.
func screen(b *testing.B, p *scanner.Pipeline, conv *scanner.Conversation) {
	if r := p.Screen(context.Background(), conv, scanner.Input); r.Outcome != scanner.Passed {
		b.Fatalf("clean prompt screened %s: %+v", r.Outcome, r.Scanners)
	}
}

// uniqueTurn returns text with a counter written over its first bytes, so
// every iteration screens a text the verdict cache has not seen. Building
// it is one allocation, counted in the benchmark: a new turn arrives as a
// new string in the gateway too.
func uniqueTurn(buf []byte, text string, i int) string {
	buf = append(buf[:0], text...)
	n := strconv.AppendInt(buf[len(buf):], int64(i), 10)
	copy(buf, n)
	return string(buf)
}

// BenchmarkDefaultPipeline screens with the default endpoint config.
//
//   - 2KB, 16KB: one user message, no verdict cache: the full cost of
//     screening a prompt, normalised views included (the pipeline builds a
//     new Text per screening); -other-language the same prompt in Spanish.
//   - 1turn: one new 2 KB user message through a pipeline with a verdict
//     cache (a miss, then the verdict is stored).
//   - 20turn-warm: a system prompt and 18 earlier 2 KB turns already in
//     the cache, plus one new 2 KB user turn.
func BenchmarkDefaultPipeline(b *testing.B) {
	prompts := []struct {
		name string
		text func(n int) string
	}{{"", prompt}, {"-other-language", promptOtherLanguage}}
	for _, n := range []int{2 << 10, 16 << 10} {
		for _, pr := range prompts {
			b.Run(strconv.Itoa(n>>10)+"KB"+pr.name, func(b *testing.B) {
				p := newPipeline(b, scanner.Options{})
				conv := &scanner.Conversation{Messages: []scanner.Message{{Role: scanner.RoleUser, Text: pr.text(n)}}}
				b.SetBytes(int64(n))
				b.ReportAllocs()
				cpu := cputime.Process()
				for b.Loop() {
					screen(b, p, conv)
				}
				reportCPU(b, cpu)
			})
		}
	}
	turn := prompt(2 << 10)
	b.Run("1turn", func(b *testing.B) {
		cache, err := scanner.NewVerdictCache(0)
		if err != nil {
			b.Fatal(err)
		}
		defer cache.Close()
		p := newPipeline(b, scanner.Options{Cache: cache, ConfigVersion: "bench"})
		conv := &scanner.Conversation{Messages: []scanner.Message{{Role: scanner.RoleUser}}}
		buf := make([]byte, 0, len(turn))
		b.ReportAllocs()
		i := 0
		cpu := cputime.Process()
		for b.Loop() {
			i++
			conv.Messages[0].Text = uniqueTurn(buf, turn, i)
			screen(b, p, conv)
		}
		reportCPU(b, cpu)
	})
	b.Run("20turn-warm", func(b *testing.B) {
		cache, err := scanner.NewVerdictCache(0)
		if err != nil {
			b.Fatal(err)
		}
		defer cache.Close()
		p := newPipeline(b, scanner.Options{Cache: cache, ConfigVersion: "bench"})
		msgs := []scanner.Message{{Role: scanner.RoleSystem, Text: "You are a helpful assistant for Example Ltd. Answer briefly and politely."}}
		for k := 1; k < 19; k++ {
			role := scanner.RoleUser
			if k%2 == 0 {
				role = scanner.RoleAssistant
			}
			// Distinct earlier turns, as a real chat has.
			msgs = append(msgs, scanner.Message{Role: role, Text: uniqueTurn(nil, turn, -k)})
		}
		conv := &scanner.Conversation{Messages: append(msgs, scanner.Message{Role: scanner.RoleUser})}
		// Warm the cache with the 19 earlier messages.
		screen(b, p, &scanner.Conversation{Messages: msgs})
		buf := make([]byte, 0, len(turn))
		b.ReportAllocs()
		i := 0
		cpu := cputime.Process()
		for b.Loop() {
			i++
			conv.Messages[len(conv.Messages)-1].Text = uniqueTurn(buf, turn, i)
			screen(b, p, conv)
		}
		reportCPU(b, cpu)
	})
}

// BenchmarkDefaultScanner runs each default scanner alone on a 2 KB prompt,
// with a new Text per iteration so the views it needs are built each time,
// as in a screening. Views shared by several scanners are therefore counted
// in each of them: the per-scanner figures add up to more than the
// pipeline's.
func BenchmarkDefaultScanner(b *testing.B) {
	text := prompt(2 << 10)
	for _, e := range Entries() {
		b.Run(e.Module, func(b *testing.B) {
			s, err := e.New()
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			cpu := cputime.Process()
			for b.Loop() {
				t := &scanner.Target{Text: scanner.NewText(text), Direction: scanner.Input, Role: scanner.RoleUser}
				f, err := s.Scan(ctx, t)
				if err != nil || f.Detected {
					b.Fatalf("clean prompt: %+v, %v", f, err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkViews measures the shared normalised views on the same prompt.
func BenchmarkViews(b *testing.B) {
	text := prompt(2 << 10)
	views := []struct {
		name string
		fn   func(*scanner.Text)
	}{
		{"Canonical", func(t *scanner.Text) { t.Canonical() }},
		{"Folded", func(t *scanner.Text) { t.Folded() }},
		{"Decoded", func(t *scanner.Text) { t.Decoded() }},
	}
	for _, v := range views {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			cpu := cputime.Process()
			for b.Loop() {
				v.fn(scanner.NewText(text))
			}
			reportCPU(b, cpu)
		})
	}
}
