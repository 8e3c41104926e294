package scanner

import (
	"fmt"
	"regexp/syntax"
	"unicode/utf8"
)

// Partial tells, for a regular expression and a text that may still grow
// (a streamed answer), from which offset a match could still start and
// reach past the end of the text. Go's regexp answers only for the text as
// it is; a streaming screener must also know whether the last bytes are
// the beginning of a match the next bytes may complete, because those
// bytes must not reach the client yet.
//
// It runs the expression's NFA over the text (a Pike VM without
// captures), starting a thread at every offset, and reports the earliest
// start of a thread still alive at the end. At the end of the text,
// assertions that depend on the next character (\b, \B, $) are taken as
// possibly true: the next character is not known yet. A Partial is
// immutable and safe for concurrent use.
type Partial struct {
	prog *syntax.Prog
	// anchored: the expression matches only at the start of the text, so
	// threads start at offset 0 only.
	anchored bool
}

// NewPartial compiles expr, in Go's RE2 syntax with Perl flags (as
// regexp.Compile reads it).
func NewPartial(expr string) (*Partial, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("scanner: partial matcher: %w", err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, fmt.Errorf("scanner: partial matcher: %w", err)
	}
	return &Partial{prog: prog, anchored: prog.StartCond()&syntax.EmptyBeginText != 0}, nil
}

// threadList is a sparse set of program counters, each with the earliest
// offset a thread at that pc started from.
type threadList struct {
	sparse []uint32
	dense  []thread
}

type thread struct {
	pc    uint32
	start int
}

func newThreadList(n int) threadList {
	return threadList{sparse: make([]uint32, n), dense: make([]thread, 0, n)}
}

func (l *threadList) has(pc uint32) bool {
	i := l.sparse[pc]
	return int(i) < len(l.dense) && l.dense[i].pc == pc
}

func (l *threadList) insert(pc uint32, start int) {
	l.sparse[pc] = uint32(len(l.dense))
	l.dense = append(l.dense, thread{pc, start})
}

// Open returns the earliest offset of s from which a match could still
// start and continue past the end of s, or len(s) when no match can reach
// the end. A match wholly inside s is not open: Scan on s finds it.
func (p *Partial) Open(s string) int {
	return p.open(s, p.anchored)
}

// OpenAt is Open for a match that must start exactly at offset from (a
// rule anchored at a keyword): it returns from when such a match is still
// possible and len(s) otherwise.
func (p *Partial) OpenAt(s string, from int) int {
	if p.open(s[from:], true) < len(s)-from {
		return from
	}
	return len(s)
}

// open runs the VM over s, starting threads at offset 0 only when
// anchored.
func (p *Partial) open(s string, anchored bool) int {
	n := len(p.prog.Inst)
	clist, nlist := newThreadList(n), newThreadList(n)
	prev := rune(-1)
	for pos := 0; ; {
		r, w := rune(-1), 0
		if pos < len(s) {
			r, w = utf8.DecodeRuneInString(s[pos:])
		}
		if pos == 0 || !anchored {
			p.add(&clist, uint32(p.prog.Start), pos, pos, prev, r, pos == len(s))
		}
		if pos == len(s) {
			break
		}
		if len(clist.dense) == 0 && anchored {
			return len(s)
		}
		next := pos + w
		var after rune = -1
		if next < len(s) {
			after, _ = utf8.DecodeRuneInString(s[next:])
		}
		nlist.dense = nlist.dense[:0]
		for _, t := range clist.dense {
			inst := &p.prog.Inst[t.pc]
			if consumes(inst, r) {
				p.add(&nlist, inst.Out, t.start, next, r, after, next == len(s))
			}
		}
		clist, nlist = nlist, clist
		prev, pos = r, next
	}
	open := len(s)
	for _, t := range clist.dense {
		if waits(p.prog.Inst[t.pc].Op) && t.start < open {
			open = t.start
		}
	}
	return open
}

// add follows the empty transitions from pc at offset pos and records the
// threads that wait for a rune (or that matched). before and after are the
// runes around pos (-1 at an end); at the end of the text the assertions
// about the next rune are taken as satisfiable.
func (p *Partial) add(l *threadList, pc uint32, start, pos int, before, after rune, atEnd bool) {
	if l.has(pc) {
		return
	}
	l.insert(pc, start)
	inst := &p.prog.Inst[pc]
	switch inst.Op {
	case syntax.InstAlt, syntax.InstAltMatch:
		p.add(l, inst.Out, start, pos, before, after, atEnd)
		p.add(l, inst.Arg, start, pos, before, after, atEnd)
	case syntax.InstCapture, syntax.InstNop:
		p.add(l, inst.Out, start, pos, before, after, atEnd)
	case syntax.InstEmptyWidth:
		cond := syntax.EmptyOp(inst.Arg)
		ok := cond&^syntax.EmptyOpContext(before, after) == 0
		if atEnd {
			// The next rune is unknown: only the assertions about what
			// came before can fail.
			known := syntax.EmptyBeginLine | syntax.EmptyBeginText
			ok = cond&known&^syntax.EmptyOpContext(before, -1) == 0
		}
		if ok {
			p.add(l, inst.Out, start, pos, before, after, atEnd)
		}
	}
}

// waits tells whether an instruction consumes a rune.
func waits(op syntax.InstOp) bool {
	switch op {
	case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	}
	return false
}

// consumes tells whether inst is a rune instruction that accepts r.
func consumes(inst *syntax.Inst, r rune) bool {
	switch inst.Op {
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	case syntax.InstRune, syntax.InstRune1:
		return inst.MatchRune(r)
	}
	return false
}
