package evaluate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxLine bounds one JSON Lines record, as for `caddy promptwall scan`.
const MaxLine = 16 << 20

// Row is one labelled text.
type Row struct {
	// Line is the 1-based line number in the input, for messages.
	Line int
	Text string
	// System is an optional system prompt screened with the text, for
	// scanners that judge a text against it.
	System string
	// Label is 1 when something should be detected in Text. For span rows
	// without an explicit label it is 1 when Spans is not empty.
	Label int
	// Category groups rows in the report; "" when the row has none.
	Category string
	// Spans are the gold entities of a span row; nil for a label-only row.
	Spans []Span
	// HasSpans distinguishes a span row without entities (a negative) from
	// a label-only row.
	HasSpans bool
}

// Span is a gold or predicted entity: UTF-8 byte offsets into Row.Text,
// half-open, as scanner.Match reports them.
type Span struct {
	Start int    `json:"start"`
	End   int    `json:"end"`
	Kind  string `json:"kind"`
}

type rawRow struct {
	Text     *string         `json:"text"`
	System   string          `json:"system"`
	Label    json.RawMessage `json:"label"`
	Category string          `json:"category"`
	Spans    *[]rawSpan      `json:"spans"`
}

// rawSpan accepts "type" beside "kind" because Presidio-derived data (the
// labelled PII set among it) names the entity kind "type".
type rawSpan struct {
	Start *int   `json:"start"`
	End   *int   `json:"end"`
	Kind  string `json:"kind"`
	Type  string `json:"type"`
}

// LineError is a bad input line; Line is 1-based.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadRows reads every row before anything is screened, so that a typo on
// the last line of a large file fails in milliseconds, not after minutes of
// screening. Blank lines are skipped; any other bad line is a *LineError.
func ReadRows(r io.Reader) ([]Row, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	var rows []Row
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		row, err := parseRow(b)
		if err != nil {
			return nil, &LineError{Line: line, Err: err}
		}
		row.Line = line
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &LineError{Line: line + 1, Err: fmt.Errorf("longer than %d bytes", MaxLine)}
		}
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New("no rows in the input")
	}
	return rows, nil
}

func parseRow(b []byte) (Row, error) {
	var raw rawRow
	if err := json.Unmarshal(b, &raw); err != nil {
		return Row{}, fmt.Errorf("not a JSON object with the row's fields: %v", err)
	}
	if raw.Text == nil {
		return Row{}, errors.New(`missing "text"`)
	}
	row := Row{Text: *raw.Text, System: raw.System, Category: raw.Category}
	if raw.Spans != nil {
		row.HasSpans = true
		row.Spans = make([]Span, 0, len(*raw.Spans))
		for i, s := range *raw.Spans {
			sp, err := checkSpan(s, len(row.Text))
			if err != nil {
				return Row{}, fmt.Errorf("span %d: %w", i+1, err)
			}
			row.Spans = append(row.Spans, sp)
		}
		if len(row.Spans) > 0 {
			row.Label = 1
		}
	}
	switch l := string(raw.Label); {
	case raw.Label == nil && row.HasSpans:
	case raw.Label == nil:
		return Row{}, errors.New(`missing "label" (0 or 1) or "spans"`)
	case l == "0" || l == "1":
		row.Label = int(l[0] - '0')
	default:
		return Row{}, fmt.Errorf(`"label" is %s, want 0 or 1`, l)
	}
	return row, nil
}

func checkSpan(s rawSpan, textLen int) (Span, error) {
	kind := s.Kind
	if kind == "" {
		kind = s.Type
	}
	switch {
	case kind == "":
		return Span{}, errors.New(`missing "kind"`)
	case s.Start == nil || s.End == nil:
		return Span{}, errors.New(`missing "start" or "end"`)
	case *s.Start < 0 || *s.End <= *s.Start:
		return Span{}, fmt.Errorf("want 0 <= start < end, got [%d, %d)", *s.Start, *s.End)
	case *s.End > textLen:
		return Span{}, fmt.Errorf("end %d beyond the text's %d bytes (offsets are UTF-8 bytes)", *s.End, textLen)
	}
	return Span{Start: *s.Start, End: *s.End, Kind: kind}, nil
}
