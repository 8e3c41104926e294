package redteam

import (
	"strings"
	"testing"
	"time"
)

func TestScheduleNext(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// 2026-05-01 is a Friday.
	tests := []struct {
		expr, after, want string
	}{
		{"*/15 * * * *", "2026-05-01T10:07:30Z", "2026-05-01T10:15:00Z"},
		{"0 3 * * *", "2026-05-01T03:00:00Z", "2026-05-02T03:00:00Z"},
		{"30 9 * * mon-fri", "2026-05-01T10:00:00Z", "2026-05-04T09:30:00Z"},
		{"0 0 1 jan *", "2026-05-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"0 12 13 * 5", "2026-05-01T12:00:00Z", "2026-05-08T12:00:00Z"}, // dom OR dow: Friday the 8th
		{"0 0 * * 7", "2026-05-01T00:00:00Z", "2026-05-03T00:00:00Z"},   // 7 is Sunday
		{"5/20 1,2 * * *", "2026-05-01T01:46:00Z", "2026-05-01T02:05:00Z"},
		{"0 0 29 2 *", "2026-05-01T00:00:00Z", "2028-02-29T00:00:00Z"},
		{"@daily", "2026-05-01T23:59:00Z", "2026-05-02T00:00:00Z"},
		{"6h", "2026-05-01T10:07:30Z", "2026-05-01T16:07:30Z"},
		{"@every 90m", "2026-05-01T10:00:00Z", "2026-05-01T11:30:00Z"},
	}
	for _, tt := range tests {
		s, err := ParseSchedule(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if got := s.Next(at(tt.after)); !got.Equal(at(tt.want)) {
			t.Errorf("%s after %s: %s, want %s", tt.expr, tt.after, got.Format(time.RFC3339), tt.want)
		}
		if s.String() != tt.expr {
			t.Errorf("String() = %q", s.String())
		}
	}
}

func TestParseScheduleErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"* * * *", "want 5 cron fields"},
		{"60 * * * *", "minute field: value \"60\" is not in 0-59"},
		{"* 5-2 * * *", "runs backwards"},
		{"*/0 * * * *", "bad step"},
		{"* * * foo *", "month field"},
		{"30s", "interval under 1m0s"},
		{"0 0 30 2 *", "never fires"},
		{"@every soon", "invalid duration"},
	}
	for _, tt := range tests {
		if _, err := ParseSchedule(tt.expr); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSchedule(%q) = %v, want error containing %q", tt.expr, err, tt.want)
		}
	}
}
