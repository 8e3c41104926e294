package scanner

// Leetspeak folding for the Folded view.
//
// Digits and symbols stand for letters only inside words, so the rules look
// at the token around a candidate: a token is a maximal run of ASCII
// letters, digits and leetspeak symbols; a group is a maximal run of
// non-letters inside it. A group is folded when every character in it has a
// letter reading and it is at most maxLeetGroup long, and
//
//   - it sits between two letters ("h4ck", "l33t", "pa$$word"), or
//   - it is one digit, '@' or '$' starting a token that goes on with a letter
//     and holds at least three letters ("1gnore", "0bey", "@dmin"), or
//   - it is one digit, '@' or '$' ending a token in which another group
//     was already folded ("h4ck3", "1gn0r3"): the token is evidently
//     leetspeak.
//
// So "version 3.5", phone numbers, "mp3", "python3", "10am", "5th" and
// "sha256" are left alone (no letters around, a digit ending a word that
// shows no other leetspeak, a digit starting a word too short to be one, a
// group with digits that have no letter reading), and '!', '|' and '(' are
// read as letters only between letters, never as punctuation at a word's
// edge ("hello!", "(see").

// maxLeetGroup bounds a folded group: "ab1000cd" is an identifier.
const maxLeetGroup = 3

// leetOf returns the letter c stands for, or 0.
func leetOf(c byte) byte {
	switch c {
	case '0':
		return 'o'
	case '1':
		return 'i'
	case '3':
		return 'e'
	case '4':
		return 'a'
	case '5':
		return 's'
	case '7':
		return 't'
	case '8':
		return 'b'
	case '9':
		return 'g'
	case '@':
		return 'a'
	case '$':
		return 's'
	case '!':
		return 'i'
	case '|':
		return 'l'
	case '(':
		return 'c'
	}
	return 0
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// leetTokenByte reports whether c can be part of a token: a lower-case
// letter (the view is already lower-cased), a digit or a leet symbol.
func leetTokenByte(c byte) bool {
	return isLower(c) || ('0' <= c && c <= '9') || leetOf(c) != 0
}

// edgeFoldable is what may be folded at a token's edge: digits, '@', '$'.
func edgeFoldable(c byte) bool { return ('0' <= c && c <= '9') || c == '@' || c == '$' }

// Classes of a byte for foldLeet, so its scan is one load per byte.
const (
	lcToken = 1 << iota // may be part of a token: leetTokenByte
	lcLeet              // a digit or symbol that may stand for a letter
)

var leetClass = func() (t [256]uint8) {
	for c := range 256 {
		if leetTokenByte(byte(c)) {
			t[c] |= lcToken
			if !isLower(byte(c)) {
				t[c] |= lcLeet
			}
		}
	}
	return t
}()

// leetEvident is how many tokens the rules above must fold before a text is
// taken to be written in leetspeak; then every token with a letter whose
// digits and symbols all read as letters is folded too ("4ll", "7h3",
// "5how"), which the rules alone leave for fear of "mp3" and "4 cats".
const leetEvident = 2

// foldLeet rewrites b in place; every replacement is one ASCII byte for one,
// so the origin map stays valid. Only tokens with a digit or symbol in them
// can change, so it skips from one such byte to the next (most text has
// few) and examines the token around it.
func foldLeet(b []byte) {
	if forEachLeetToken(b, foldToken) >= leetEvident {
		forEachLeetToken(b, foldTokenEvident)
	}
}

// forEachLeetToken calls fold on every token of b that holds a letter and a
// digit or symbol, with its letter count, and returns how many it folded.
func forEachLeetToken(b []byte, fold func(t []byte, letters int) bool) int {
	n := 0
	for i := 0; i < len(b); {
		for i < len(b) && leetClass[b[i]]&lcLeet == 0 {
			i++
		}
		if i == len(b) {
			return n
		}
		// The token around b[i]: back to its start (never into the last
		// token examined, which ended before a non-token byte), then on
		// to its end.
		j := i
		for j > 0 && leetClass[b[j-1]]&lcToken != 0 {
			j--
		}
		letters := 0
		for i = j; i < len(b) && leetClass[b[i]]&lcToken != 0; i++ {
			if isLower(b[i]) {
				letters++
			}
		}
		if letters > 0 && fold(b[j:i], letters) {
			n++
		}
	}
	return n
}

// foldTokenEvident folds a token of a text evidently in leetspeak: every
// group of digits and symbols in it, if all of them read as letters, none
// is longer than maxLeetGroup, and a group at the token's edge holds only
// digits, '@' and '$' ('!', '|' and '(' there are punctuation).
func foldTokenEvident(t []byte, _ int) bool {
	for i := 0; i < len(t); {
		if isLower(t[i]) {
			i++
			continue
		}
		j := i
		edge := i == 0
		for j < len(t) && !isLower(t[j]) {
			if leetOf(t[j]) == 0 {
				return false
			}
			j++
		}
		edge = edge || j == len(t)
		if j-i > maxLeetGroup {
			return false
		}
		for k := i; edge && k < j; k++ {
			if !edgeFoldable(t[k]) {
				return false
			}
		}
		i = j
	}
	foldGroup(t)
	return true
}

func foldToken(t []byte, letters int) bool {
	folded := false
	var endGroup [2]int // start and end of a trailing group, if any
	for i := 0; i < len(t); {
		if isLower(t[i]) {
			i++
			continue
		}
		j := i
		mappable := true
		for j < len(t) && !isLower(t[j]) {
			if leetOf(t[j]) == 0 {
				mappable = false
			}
			j++
		}
		n := j - i
		switch {
		case !mappable || n > maxLeetGroup:
		case i > 0 && j < len(t):
			foldGroup(t[i:j])
			folded = true
		case i == 0 && j < len(t):
			if n == 1 && edgeFoldable(t[0]) && letters >= 3 {
				foldGroup(t[i:j])
				folded = true
			}
		case i > 0 && j == len(t):
			if n == 1 && edgeFoldable(t[i]) {
				endGroup = [2]int{i, j}
			}
		}
		i = j
	}
	if folded && endGroup[1] > 0 {
		foldGroup(t[endGroup[0]:endGroup[1]])
	}
	return folded
}

// foldGroup replaces the digits and symbols of g by the letters they read
// as; letters stay.
func foldGroup(g []byte) {
	for k, c := range g {
		if !isLower(c) {
			g[k] = leetOf(c)
		}
	}
}
