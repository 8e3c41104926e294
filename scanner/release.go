package scanner

// Release points for streamed answers.
//
// A streamed answer is screened while it grows, and no byte may reach the
// client while a detector could still find it inside a match once more
// text arrives: a key whose token has not ended, digits that may still
// become a card number, words that are the beginning of a banned phrase.
// Each detector that blocks or redacts says from which offset it could
// still match (Holder); everything before the earliest of these offsets
// can be released at once, so ordinary prose leaves a word or a chunk
// behind the upstream instead of a fixed window behind it.
//
// The last token of a growing text is where most matches are still open:
// a key's token that has not ended, a number that may grow. Detectors hold
// it (OpenToken) unless it is a plain word (PlainWord) that no rule of
// theirs can grow from; models stream a word per event with its leading
// space, so releasing plain words at once is what keeps prose from
// trailing a whole event behind.

// Holder is implemented by detectors that can judge a text which may still
// grow at its end.
type Holder interface {
	// Hold returns the offset in t.Text.Original from which a match could
	// still start, or an existing match still grow, once more text is
	// appended; len(t.Text.Original) when nothing could. A match that
	// Scan finds in the text as it is need not be held: it is screened
	// before anything is released. Hold must not retain t.
	Hold(t *Target) int
}

// OpenToken returns the offset of the last token of s, the bytes after its
// last ASCII whitespace (len(s) when s ends with whitespace). It is the
// hold of the normalisation and decoding every detector relies on: the
// canonical and folded views of a character may change with the next one
// (a combining mark, a confusable sequence), and an encoded run (base64,
// hex, percent escapes) is decoded whole, so neither is settled before its
// token ends. Unicode spaces do not end a token here: holding more is safe.
func OpenToken(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			return i + 1
		}
	}
	return 0
}

// PlainWord tells whether tok, a last token, is a plain word: one to twelve
// ASCII letters, optionally followed by one of , ; ! ?. Its normalised
// views (canonical, folded) cannot change with the next byte, since ASCII
// letters fold one by one and the punctuation ends it, and it holds no
// digit, symbol or encoding run a credential or identifier would start
// with. Longer runs of letters may be the start of a random token and are
// not plain.
func PlainWord(tok string) bool {
	n := len(tok)
	if n > 0 {
		switch tok[n-1] {
		case ',', ';', '!', '?':
			n--
		}
	}
	if n == 0 || n > 12 {
		return false
	}
	for i := 0; i < n; i++ {
		if c := tok[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// HeldToken returns where the last token of s starts when it must be held
// for the normalisation's sake, or len(s) when it is a plain word.
func HeldToken(s string) int {
	i := OpenToken(s)
	if PlainWord(s[i:]) {
		return len(s)
	}
	return i
}

// Hold returns the offset of text, a growing answer, before which nothing
// can be part of a match of the pipeline's blocking detectors for dir that
// block or redact: the minimum of their Holds. A flagging
// detector changes nothing the client receives and holds nothing. A
// detector that does not implement Holder holds the whole text, so the
// caller's bound on holding decides. context supplies the rest of the
// exchange (the system prompt, for a leak check) and may be nil.
func (p *Pipeline) Hold(text string, dir Direction, context *Conversation) int {
	hold := len(text)
	plan := p.plans[dirIndex(dir)][passBlocking]
	if len(plan) == 0 || hold == 0 {
		return hold
	}
	role := RoleUser
	if dir == Output {
		role = RoleAssistant
	}
	t := Target{Text: NewText(text), Direction: dir, Role: role, Conversation: context}
	for _, si := range plan {
		st := &p.stages[si]
		if !st.Enabled || st.Mode == ModeFlag {
			continue
		}
		h, ok := st.sc.(Holder)
		if !ok {
			return 0
		}
		hold = min(hold, max(0, h.Hold(&t)))
		if hold == 0 {
			return 0
		}
	}
	return hold
}

// Lookbehinder is implemented by Holders that judge the text after a
// release point with a bounded number of bytes before it: a cue word
// before a number, the rest of a key name that ends in a keyword, the \b
// before a keyword. Text released further back cannot change what they
// find after the point, so a growing answer is screened from Lookbehind
// bytes before it instead of again from a long context.
type Lookbehinder interface {
	// Lookbehind returns how many bytes before the release point the
	// detector reads (at least 1).
	Lookbehind() int
}

// Lookbehind returns how many bytes of released text before the release
// point (Hold) a screening of the growing text for dir needs: the most
// any enabled blocking detector for dir reads, flagging ones included
// since their findings are recorded. It returns 0 when a detector does
// not say (it may read any context): screen with the caller's own bound.
func (p *Pipeline) Lookbehind(dir Direction) int {
	n := 1
	for _, si := range p.plans[dirIndex(dir)][passBlocking] {
		st := &p.stages[si]
		if !st.Enabled {
			continue
		}
		lb, ok := st.sc.(Lookbehinder)
		if !ok {
			return 0
		}
		n = max(n, lb.Lookbehind())
	}
	return n
}
