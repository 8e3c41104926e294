package format

import (
	"bufio"
	"bytes"
)

// Pending reports whether the next event is already read ahead in full:
// it came with the previous ones, in the same upstream write, and Next
// returns it without waiting. A screener that would only release what the
// caller flushes once the write is used up can screen the write's events
// together instead of one by one.
func (d *decoder) Pending() bool { return d.fr.pending() }

func (s *SSEReader) pending() bool { return pendingEvent(s.r, []byte("\n\n"), []byte("\n\r\n")) }

func (n *NDJSONReader) pending() bool { return pendingEvent(n.r, []byte("\n"), nil) }

// A JSON array element's end takes a parse to find; never read ahead.
func (j *jsonArrayReader) pending() bool { return false }

func (s *sniffReader) pending() bool { return s.fr != nil && s.fr.pending() }

// pendingEvent tells whether r's buffered bytes hold an event's end.
func pendingEvent(r *bufio.Reader, end, alt []byte) bool {
	if r.Buffered() == 0 {
		return false
	}
	b, _ := r.Peek(r.Buffered())
	return bytes.Contains(b, end) || alt != nil && bytes.Contains(b, alt)
}
