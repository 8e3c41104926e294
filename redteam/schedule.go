package redteam

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Schedule says when a campaign runs by itself. It is written either as a
// five-field cron expression, "minute hour day-of-month month day-of-week"
// (each field "*", a number, a range "a-b", a step "*/n" or "a-b/n", or a
// comma list of those; months and weekdays also by three-letter English
// name; weekday 0 and 7 are Sunday; when both day fields are restricted a
// day matching either runs, as in every cron), one of the macros @hourly,
// @daily, @weekly, @monthly, or as an interval of at least a minute ("6h",
// "90m", "@every 6h"). Cron times are in UTC.
//
// A cron parser is written here rather than imported: the grammar is
// twenty lines of fields, the well-known library (robfig/cron) has not
// been released since 2020, and the scheduler needs only Next.
type Schedule struct {
	expr     string
	interval time.Duration
	// fields are bit sets of allowed values: minute 0-59, hour 0-23,
	// dom 1-31, month 1-12, dow 0-6.
	minute, hour, dom, month, dow uint64
	domStar, dowStar              bool
}

// String returns the expression the schedule was parsed from.
func (s *Schedule) String() string { return s.expr }

// MinInterval is the shortest interval schedule: a campaign sends hundreds
// of requests, and more often than every minute is a mistake.
const MinInterval = time.Minute

var cronMacros = map[string]string{
	"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
	"@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *",
}

var monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
var dayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// ParseSchedule parses a cron expression, macro or interval.
func ParseSchedule(expr string) (*Schedule, error) {
	s := &Schedule{expr: expr}
	e := strings.TrimSpace(expr)
	if m, ok := cronMacros[strings.ToLower(e)]; ok {
		e = m
	}
	if d, ok := strings.CutPrefix(e, "@every "); ok {
		e = strings.TrimSpace(d)
		if _, err := time.ParseDuration(e); err != nil {
			return nil, fmt.Errorf("redteam: schedule %q: %v", expr, err)
		}
	}
	if d, err := time.ParseDuration(e); err == nil {
		if d < MinInterval {
			return nil, fmt.Errorf("redteam: schedule %q: interval under %s", expr, MinInterval)
		}
		s.interval = d
		return s, nil
	}
	f := strings.Fields(e)
	if len(f) != 5 {
		return nil, fmt.Errorf("redteam: schedule %q: want 5 cron fields (minute hour day-of-month month day-of-week) or an interval such as 6h", expr)
	}
	var err error
	fields := []struct {
		name   string
		dst    *uint64
		lo, hi int
		names  []string
	}{
		{"minute", &s.minute, 0, 59, nil},
		{"hour", &s.hour, 0, 23, nil},
		{"day-of-month", &s.dom, 1, 31, nil},
		{"month", &s.month, 1, 12, monthNames},
		{"day-of-week", &s.dow, 0, 7, dayNames},
	}
	for i, fd := range fields {
		if *fd.dst, err = parseCronField(f[i], fd.lo, fd.hi, fd.names); err != nil {
			return nil, fmt.Errorf("redteam: schedule %q: %s field: %v", expr, fd.name, err)
		}
	}
	if s.dow&(1<<7) != 0 { // 7 is Sunday too
		s.dow = s.dow&^(1<<7) | 1
	}
	s.domStar, s.dowStar = f[2] == "*" || strings.HasPrefix(f[2], "*/"), f[4] == "*" || strings.HasPrefix(f[4], "*/")
	if s.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, fmt.Errorf("redteam: schedule %q never fires", expr)
	}
	return s, nil
}

func parseCronField(f string, lo, hi int, names []string) (uint64, error) {
	var set uint64
	for _, part := range strings.Split(f, ",") {
		rng, stepStr, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepStr)
			if err != nil || n < 1 || n > hi {
				return 0, fmt.Errorf("bad step %q", stepStr)
			}
			step = n
		}
		a, b := lo, hi
		if rng != "*" {
			as, bs, isRange := strings.Cut(rng, "-")
			var err error
			if a, err = cronValue(as, lo, hi, names); err != nil {
				return 0, err
			}
			b = a
			if isRange {
				if b, err = cronValue(bs, lo, hi, names); err != nil {
					return 0, err
				}
				if b < a {
					return 0, fmt.Errorf("range %q runs backwards", rng)
				}
			} else if hasStep {
				b = hi // "5/15" means from 5 to the end, every 15
			}
		}
		for v := a; v <= b; v += step {
			set |= 1 << uint(v)
		}
	}
	return set, nil
}

func cronValue(s string, lo, hi int, names []string) (int, error) {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			if len(names) == 12 {
				return i + 1, nil
			}
			return i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("value %q is not in %d-%d", s, lo, hi)
	}
	return v, nil
}

// Next returns the first time strictly after t the schedule fires, or the
// zero time if it never does within five years (e.g. "0 0 30 2 *"). An
// interval schedule fires every interval after t.
func (s *Schedule) Next(t time.Time) time.Time {
	if s.interval > 0 {
		return t.Add(s.interval)
	}
	t = t.UTC().Truncate(time.Minute).Add(time.Minute)
	end := t.AddDate(5, 0, 0)
	for t.Before(end) {
		switch {
		case s.month&(1<<uint(t.Month())) == 0:
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		case !s.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
		case s.hour&(1<<uint(t.Hour())) == 0:
			t = t.Truncate(time.Hour).Add(time.Hour)
		case s.minute&(1<<uint(t.Minute())) == 0:
			t = t.Add(time.Minute)
		default:
			return t
		}
	}
	return time.Time{}
}

func (s *Schedule) dayMatches(t time.Time) bool {
	dom := s.dom&(1<<uint(t.Day())) != 0
	dow := s.dow&(1<<uint(t.Weekday())) != 0
	if s.domStar || s.dowStar {
		return dom && dow
	}
	return dom || dow
}
