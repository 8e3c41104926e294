package injection

import (
	"context"
	"testing"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

// cleanText returns about n bytes of ordinary prose.
func cleanText(n int) string {
	return scannertest.Fill("Our team met on Tuesday to review the roadmap for the next quarter. "+
		"We agreed to prioritise the billing migration, because the old system is expensive to run "+
		"and two customers asked for invoices in their own currency. Maria will draft the plan, "+
		"and we will discuss the estimates at the planning session next week. ", n)
}

// otherLanguageText returns about n bytes of ordinary Spanish prose, which
// the scanner also judges on its English gloss.
func otherLanguageText(n int) string {
	return scannertest.Fill("Nuestro equipo se reunió el martes para revisar el plan del próximo trimestre. "+
		"Acordamos dar prioridad a la migración de facturación, porque el sistema antiguo es caro "+
		"y dos clientes pidieron facturas en su propia moneda. María escribirá el plan y "+
		"hablaremos de las estimaciones en la reunión de la semana que viene. ", n)
}

func benchmarkScan(b *testing.B, n int) { benchmarkScanText(b, cleanText(n)) }

// The cost of the gloss on the texts it judges.
func BenchmarkScanOtherLanguage2KB(b *testing.B) { benchmarkScanText(b, otherLanguageText(2<<10)) }

func benchmarkScanText(b *testing.B, text string) {
	s := newScanner(b, Config{})
	n := len(text)
	ctx := context.Background()
	// One Text for all iterations: its normalised views are built once, as
	// the pipeline builds them once for all scanners, so this measures the
	// scanner's own cost (BenchmarkScanWithViews2KB includes the views).
	t := scanner.NewText(text)
	target := &scanner.Target{Text: t}
	b.ReportAllocs()
	b.SetBytes(int64(n))
	for b.Loop() {
		if _, err := s.Scan(ctx, target); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScanClean2KB(b *testing.B)  { benchmarkScan(b, 2<<10) }
func BenchmarkScanClean16KB(b *testing.B) { benchmarkScan(b, 16<<10) }

// BenchmarkScanWithViews includes building the normalised views.
func BenchmarkScanWithViews2KB(b *testing.B) {
	s := newScanner(b, Config{})
	text := cleanText(2 << 10)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Scan(ctx, &scanner.Target{Text: scanner.NewText(text)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtract2KB measures the feature walk alone on folded prose.
func BenchmarkExtract2KB(b *testing.B) {
	m, err := ShippedModel()
	if err != nil {
		b.Fatal(err)
	}
	s := scanner.NewText(cleanText(2 << 10)).Folded().S
	var out featureSink
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		m.spec.extract(s, &out, m.w)
	}
}
