package evaluate

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as aligned text: one block per scanner, its
// overall figures first ("all"), then one line per category; then, for
// scanners scored on spans, one line per entity kind.
func (r *Report) WriteTable(w io.Writer) error {
	errCol := false
	for _, s := range r.Scanners {
		errCol = errCol || s.Overall.Errors > 0
	}
	head := []string{"scanner", "category", "texts", "positives", "caught", "missed", "FP", "precision", "recall", "FP rate", "µs/text"}
	if errCol {
		head = append(head, "errors")
	}
	line := func(id, cat string, c *Counts) []string {
		l := []string{id, cat, itoa(c.Texts), itoa(c.Positives), itoa(c.Caught), itoa(c.Missed), itoa(c.FalsePositives),
			frac(c.Precision), frac(c.Recall), frac(c.FalsePositiveRate), strconv.FormatFloat(c.MeanMicros, 'f', 1, 64)}
		if errCol {
			l = append(l, itoa(c.Errors))
		}
		return l
	}
	t := [][]string{head}
	for i, s := range r.Scanners {
		if i > 0 {
			t = append(t, nil)
		}
		t = append(t, line(s.ID, "all", &s.Overall))
		for j := range s.Categories {
			t = append(t, line("", s.Categories[j].Category, &s.Categories[j].Counts))
		}
	}
	if _, err := fmt.Fprintf(w, "%d rows (%d positive, %d negative), direction %s; all scanners together %.1f µs/text, each alone below\n\n",
		r.Rows, r.Positives, r.Negatives, r.Direction, r.MeanMicros); err != nil {
		return err
	}
	if err := writeAligned(w, t, 2); err != nil {
		return err
	}

	var k [][]string
	for _, s := range r.Scanners {
		for _, kc := range s.Kinds {
			if k == nil {
				k = [][]string{{"scanner", "kind", "gold", "predicted", "caught", "missed", "FP", "precision", "recall"}}
			}
			k = append(k, []string{s.ID, kc.Kind, itoa(kc.Gold), itoa(kc.Predicted), itoa(kc.Caught), itoa(kc.Missed),
				itoa(kc.FalsePositives), frac(kc.Precision), frac(kc.Recall)})
		}
	}
	if k == nil {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\nexact spans per entity kind (rows with spans: %d)\n\n", r.SpanRows); err != nil {
		return err
	}
	return writeAligned(w, k, 2)
}

// writeAligned pads columns to their widest cell, the first left columns
// left-aligned (names) and the rest right-aligned (figures). A nil row is a
// blank line.
func writeAligned(w io.Writer, rows [][]string, left int) error {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < left {
				b.WriteString(c)
				if i < len(r)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad)
				b.WriteString(c)
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }

// frac prints an undefined ratio as "-" rather than 0, which would read as
// a measured failure.
func frac(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}
