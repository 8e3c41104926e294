package scanner

import "strings"

// Placeholder is one of a vault's placeholders found in a text, with the
// value it stands for.
type Placeholder struct {
	Start, End int
	Value      string
}

// Placeholders returns the vault's placeholders in text, in order, the way
// Restore finds them. A streamed answer is restored piece by piece: its
// events are released one by one and a placeholder may span several, so
// the caller needs the spans rather than the restored text.
func (v *Vault) Placeholders(text string) []Placeholder {
	if strings.IndexByte(text, '[') < 0 {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []Placeholder
	for i := 0; ; {
		p, ok := v.nextLocked(text, i)
		if !ok {
			return out
		}
		out = append(out, p)
		i = p.End
	}
}

// nextLocked finds the first of the vault's placeholders in text at or
// after byte i, exactly as written (an altered one is not a placeholder).
// v.mu must be held.
func (v *Vault) nextLocked(text string, i int) (Placeholder, bool) {
	for len(v.byPH) > 0 {
		j := strings.IndexByte(text[i:], '[')
		if j < 0 {
			break
		}
		i += j
		if end := strings.IndexByte(text[i+1:min(len(text), i+v.longest)], ']'); end >= 0 {
			ph := text[i : i+end+2]
			if val, ok := v.byPH[ph]; ok {
				return Placeholder{Start: i, End: i + len(ph), Value: val}, true
			}
		}
		i++
	}
	return Placeholder{}, false
}

// Longest returns the length of the vault's longest placeholder.
func (v *Vault) Longest() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.longest
}

// Open returns the offset of the placeholder beginning that text ends with
// ("[EMAIL_ADD"), or len(text) when it ends with none. A streamed answer
// holds its text from there until the placeholder is complete or turns
// out not to be one: its first bytes must not leave before the value that
// replaces it is known.
func (v *Vault) Open(text string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.byPH) == 0 {
		return len(text)
	}
	for i := max(0, len(text)-v.longest+1); i < len(text); i++ {
		if text[i] != '[' {
			continue
		}
		for ph := range v.byPH {
			if strings.HasPrefix(ph, text[i:]) {
				return i
			}
		}
	}
	return len(text)
}
