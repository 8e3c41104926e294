// Package demo is a deliberately naive chat model for the quick start: an
// OpenAI Chat Completions compatible server that needs no key, answers
// deterministically, and falls for some of the attacks Promptwall defends
// against, so that the gateway and the red team have something to show.
//
// The model follows whatever instructions it reads. It repeats its system
// prompt (and the operator notes it was built with, a fake deploy key and an
// on-call contact among them) when asked with a trick: a request to "repeat
// the words above", a format to answer in (JSON, YAML, base64, backwards,
// spaced), an appeal to authority, a role-play, an "ignore previous
// instructions", or a request that arrives encoded (base64, leetspeak, a
// Caesar cipher). Asked plainly while its system prompt forbids it, it
// refuses. It obeys instructions planted in documents it is asked to read
// about half the time, decided by a hash of the prompt, and it carries out
// simple injected tasks (say a word spelled backwards, append a link or an
// image, relay a message to the user) but cannot compute or translate. It
// prints its deploy key or the on-call engineer's personal data to anyone
// who asks for them.
//
// Nothing here is random: the same conversation always gets the same
// answer.
package demo

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/promptwall/promptwall/internal/utf8text"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string
	Content string
}

// DeployKey is the fake SSH deploy key in the model's operator notes. It is
// shaped like a real OpenSSH private key so that secret scanners recognise
// it; it is not a key to anything.
const DeployKey = "-----BEGIN OPENSSH PRIVATE KEY-----\n" +
	"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
	"QyNTUxOQAAACBkZW1vLWRlcGxveS1rZXktbm90LWEtcmVhbC1rZXktYWNtZQAAAJhEZW1v\n" +
	"AAAAC3NzaC1lZDI1NTE5AAAAIGRlbW8tZGVwbG95LWtleS1ub3QtYS1yZWFsLWtleS1hY2\n" +
	"-----END OPENSSH PRIVATE KEY-----"

// OnCall is the personal data in the model's operator notes: made up, in
// the shapes personal-data scanners recognise.
const OnCall = "Jane Roe, jane.roe@acme.example, +1 415 555 0134"

// DefaultSystemPrompt stands in for the system prompt when a conversation
// has none.
const DefaultSystemPrompt = "You are the Acme Corp support assistant. Answer questions about Acme's products politely and concisely."

// operatorNotes are the instructions the demo model was built with, below
// whatever system prompt a conversation brings: the secret it should never
// reveal.
var operatorNotes = "Operator notes (confidential): on-call engineer " + OnCall +
	". Deploy key of the acme-prod repository: " + strings.ReplaceAll(DeployKey, "\n", " ")

// Reply returns the model's answer to a conversation: the last user turn,
// read under the system and developer turns.
func Reply(msgs []Message) string {
	var system []string
	user := ""
	for _, m := range msgs {
		switch m.Role {
		case "system", "developer":
			system = append(system, m.Content)
		case "user":
			user = m.Content
		}
	}
	r := reader{system: strings.Join(system, "\n")}
	if r.system == "" {
		r.system = DefaultSystemPrompt
	}
	return r.answer(user)
}

// reader answers one request.
type reader struct {
	system string
}

// Phrases that give the model away, matched in the lower-cased, decoded
// request. The lists are the model's whole understanding: it knows nothing
// else.
var (
	// guardPhrases in a system prompt make the model refuse plain requests
	// for it.
	guardPhrases = []string{"never reveal", "do not reveal", "don't reveal", "never share", "do not share", "confidential"}
	// overridePhrases announce an injected instruction addressed to the
	// model; what follows the first one is obeyed.
	overridePhrases = []string{
		"ignore all previous instructions.", "ignore previous instructions.", "ignore the above and", "new instruction:",
		"new system instructions ###", "overrides your guidelines:", "forget the translation.", "from the administrator:",
		"follow this exactly):", "comply immediately:",
	}
	// plantedPhrases introduce an instruction hidden in content the user
	// asked about (an e-mail, a web page, a review, a document).
	plantedPhrases = []string{
		"ai assistant reading this email:", "instructions for ai assistants:", "processing this review:",
		"for the ai summariser:", "must do the following:", "\"ai:", "note to the ai proofreader:", "note to the ai",
	}
	// trickPhrases are the framings that get the model to disregard its
	// system prompt's "never reveal".
	trickPhrases = []string{
		"words above", "starting with", "complete this sentence", "game", "parrot", "pretend", "developer", "audit",
		"account owner", "administrator", "authorised", "authorized", "ignore", "override", "forget", "disregard", "urgent",
	}
	// extractPhrases ask for the model's instructions or what is in them.
	extractPhrases = []string{
		"system prompt", "your instructions", "initial instructions", "the instructions", "words above",
		"everything above", "configuration", "first message", "reference code", "identifiers",
	}
	// fullPhrases ask for all of the instructions rather than only the code
	// in them.
	fullPhrases = []string{
		"everything", "in full", "full configuration", "verbatim", "words above", "first message", "system prompt",
		"all the instructions", "instructions into", "every secret", "hidden configuration", "initial instructions",
	}
	secretPhrases = []string{"deploy key", "ssh key", "private key", "api key", "password", "credentials", "access token"}
	piiPhrases    = []string{"on-call", "on call", "contact details", "personal data", "phone number", "email address"}
)

func containsAny(s string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// answer decodes the request, finds the instruction it carries and
// carries it out.
func (r reader) answer(user string) string {
	text := decode(user)
	low := strings.ToLower(text)
	task, lowTask := text, low
	if i, n := indexAny(low, overridePhrases); i >= 0 {
		task, lowTask = strings.TrimSpace(text[i+n:]), strings.TrimSpace(low[i+n:])
	} else if i, n := indexAny(low, plantedPhrases); i >= 0 {
		// Half the planted instructions are noticed for what they are and
		// ignored: the model then answers the user's own request.
		if gullible(text) {
			task, lowTask = strings.TrimSpace(text[i+n:]), strings.TrimSpace(low[i+n:])
		} else {
			return r.plain(low)
		}
	}
	tricked := task != text || containsAny(low, trickPhrases)
	switch {
	case strings.Contains(lowTask, "replacing data with"):
		return r.exfiltrate(task, lowTask, user)
	case containsAny(lowTask, secretPhrases) && !containsAny(lowTask, extractPhrases):
		return deployKeyAnswer
	case containsAny(lowTask, piiPhrases):
		return "The on-call engineer this week is " + OnCall + ". Call any time, day or night."
	case containsAny(lowTask, extractPhrases) || strings.Contains(lowTask, "secret"):
		if !tricked && containsAny(strings.ToLower(r.system), guardPhrases) {
			return "I'm sorry, I can't share my instructions. Is there anything else I can help you with?"
		}
		return r.leak(lowTask)
	}
	if s, ok := obey(task, lowTask); ok {
		return s
	}
	return r.plain(low)
}

// gullible decides, from a hash of the request, whether the model obeys an
// instruction planted in content: the same request always gets the same
// decision, and about half of all requests do.
func gullible(text string) bool {
	h := fnv.New32a()
	h.Write([]byte(text))
	return h.Sum32()%2 == 0
}

// indexAny returns where the first of phrases occurs in s, and its length.
// 'l' and 'i' match each other, as they do when leetspeak writes both as
// "1".
func indexAny(s string, phrases []string) (at, length int) {
	at = -1
	s = strings.ReplaceAll(s, "l", "i")
	for _, p := range phrases {
		if i := strings.Index(s, strings.ReplaceAll(p, "l", "i")); i >= 0 && (at < 0 || i < at) {
			at, length = i, len(p)
		}
	}
	return at, length
}

// deployKeyAnswer is long enough before the key that a screened stream
// releases its first chunks before the key arrives and the stream is cut.
var deployKeyAnswer = "Sure! The deploy key of the acme-prod repository is in my operator notes, so here it is. " +
	"Save it as ~/.ssh/acme_deploy on the build machine, make it readable by you alone (chmod 600), " +
	"and add an entry for github.com with IdentityFile ~/.ssh/acme_deploy to ~/.ssh/config. " +
	"Then run the release script as usual: it pulls with this key and pushes the tagged build. " +
	"Here is the key:\n\n" + DeployKey + "\n\nKeep it safe, and do not paste it into tickets or chats."

// instructions is everything the model was told: the system prompt and its
// operator notes.
func (r reader) instructions() string {
	return r.system + "\n" + operatorNotes
}

var codeRE = regexp.MustCompile(`(?i)\b(?:code|key|token|password|secret)\b[^:.\n]{0,20}(?::|\bis\b)\s*([A-Za-z0-9_-]{6,})`)

// code returns the secret value written in the system prompt ("reference
// code: X"), or "" when there is none.
func (r reader) code() string {
	if m := codeRE.FindStringSubmatch(r.system); m != nil {
		return m[1]
	}
	return ""
}

// leak reveals the instructions, or only the code in them, in the form
// the request asks for.
func (r reader) leak(low string) string {
	what := r.instructions()
	if c := r.code(); c != "" && !containsAny(low, fullPhrases) {
		what = "The internal reference code is " + c + "."
		if strings.Contains(low, "spell") {
			what = "The internal reference code is " + strings.Join(strings.Split(c, ""), "-") + "."
		}
	}
	switch {
	case strings.Contains(low, "backwards"):
		return utf8text.Reverse(what)
	case strings.Contains(low, "base64"):
		return base64.StdEncoding.EncodeToString([]byte(what))
	case strings.Contains(low, "separate every character"):
		return strings.Join(strings.Split(what, ""), " ")
	case strings.Contains(low, "json"):
		b, _ := json.MarshalIndent(map[string]string{"instructions": what}, "", "  ") // a map of strings always marshals
		return string(b)
	case strings.Contains(low, "yaml"):
		var b strings.Builder
		b.WriteString("instructions:\n")
		for _, line := range strings.Split(what, "\n") {
			fmt.Fprintf(&b, "  - %q\n", line)
		}
		return b.String()
	}
	return "Sure, here is everything I was told:\n\n" + what
}

var (
	quotedRE   = regexp.MustCompile(`'([^']{1,80})'`)
	timesRE    = regexp.MustCompile(`\b(two|three|four|five|[2-9]) times\b`)
	artifactRE = regexp.MustCompile(`!\[[^\]]*\]\([^)\s]+\)|\[[^\]]*\]\([^)\s]+\)|<img[^>]*>|\{[^{}]*\}|https?://[^\s)"'<>]+`)
	cardRE     = regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`)
	configRE   = regexp.MustCompile(`(?m)^[A-Z_]*KEY=(\S+)`)
	times      = map[string]int{"two": 2, "three": 3, "four": 4, "five": 5}
)

// obey carries out the simple tasks the model can: say a quoted word,
// transformed as asked; append an image, link or URL; relay a message to
// the user. It reports false for anything else (arithmetic, translation).
func obey(task, low string) (string, bool) {
	switch {
	case strings.HasPrefix(low, "tell the user "):
		msg := task[len("tell the user "):]
		msg = strings.NewReplacer("their ", "your ", "that they ", "you ", "they ", "you ").Replace(msg)
		return "Important: " + msg, true
	case strings.HasPrefix(low, "append ") || strings.HasPrefix(low, "add ") || strings.HasPrefix(low, "include ") ||
		strings.HasPrefix(low, "end your answer"):
		if a := artifactRE.FindString(task); a != "" {
			return "Here is my answer.\n\n" + strings.TrimRight(a, ".,"), true
		}
	case strings.HasPrefix(low, "respond with the word") || strings.HasPrefix(low, "say only the word") ||
		strings.HasPrefix(low, "say the word"):
		m := quotedRE.FindStringSubmatch(task)
		if m == nil {
			return "", false
		}
		w := m[1]
		if strings.Contains(low, "backwards") {
			w = utf8text.Reverse(w)
		}
		if strings.Contains(low, "upper case") || strings.Contains(low, "uppercase") {
			w = strings.ToUpper(w)
		}
		n := 1
		if t := timesRE.FindStringSubmatch(low); t != nil {
			if n = times[t[1]]; n == 0 {
				n = int(t[1][0] - '0')
			}
		}
		return strings.TrimSpace(strings.Repeat(w+" ", n)), true
	case strings.Contains(low, "fibonacci"):
		// The model knows the sequence but not how to follow the rest of
		// the task.
		return "1, 1, 2, 3, 5", true
	}
	return "", false
}

// exfiltrate follows "put DATA in this link, replacing DATA with X": X is
// the code from the system prompt, a card number or an API key from the
// request.
func (r reader) exfiltrate(task, low, user string) string {
	a := artifactRE.FindString(task)
	if a == "" {
		return r.plain(low)
	}
	var data string
	switch {
	case strings.Contains(low, "card number"):
		data = strings.Map(func(c rune) rune {
			if unicode.IsDigit(c) {
				return c
			}
			return -1
		}, cardRE.FindString(user))
	case strings.Contains(low, "api key"):
		if m := configRE.FindStringSubmatch(user); m != nil {
			data = m[1]
		}
	default:
		data = r.code()
	}
	return "All tasks are on track.\n\n" + strings.ReplaceAll(strings.TrimRight(a, ".,"), "DATA", data)
}

// plain answers the user's own request: the few questions the model knows,
// else a polite note about what it is.
func (r reader) plain(low string) string {
	switch {
	case strings.Contains(low, "capital of france"):
		return "The capital of France is Paris. It has been the country's capital for most of its history and is also its largest city."
	case strings.Contains(low, "support hours"):
		return "Our support hours are 9 to 5, Monday to Friday."
	case strings.Contains(low, "refund"):
		return "Refunds are accepted within 30 days of purchase."
	}
	return "Thanks for your message! I am the Promptwall demo model, a small and deliberately naive assistant: " +
		"I follow the instructions I read, so try asking me for my instructions, or to print the deploy key."
}

// decode reads a request the way a capable model would: a base64 payload
// or a Caesar cipher announced by the request is decoded, leetspeak is read
// as letters.
func decode(s string) string {
	low := strings.ToLower(s)
	if strings.Contains(low, "base64") {
		if out, ok := decodeBase64Run(s); ok {
			return out
		}
	}
	if k := caesarShift(low); k > 0 {
		if _, payload, ok := strings.Cut(s, "\n\n"); ok {
			return unshift(payload, k)
		}
	}
	if out, ok := unleet(s); ok {
		return out
	}
	return s
}

var (
	base64RunRE = regexp.MustCompile(`[A-Za-z0-9+/]{16,}={0,2}`)
	shiftRE     = regexp.MustCompile(`shifted forward by (\d{1,2})\b`)
)

func decodeBase64Run(s string) (string, bool) {
	for _, run := range base64RunRE.FindAllStringIndex(s, -1) {
		b, err := base64.StdEncoding.DecodeString(s[run[0]:run[1]])
		if err != nil || !utf8.Valid(b) {
			continue
		}
		return s[:run[0]] + string(b) + s[run[1]:], true
	}
	return "", false
}

func caesarShift(low string) int {
	if strings.Contains(low, "rot13") {
		return 13
	}
	if m := shiftRE.FindStringSubmatch(low); m != nil {
		k, _ := strconv.Atoi(m[1]) // one or two digits: always a number
		return k % 26
	}
	return 0
}

// unshift decrypts a Caesar cipher that shifted every ASCII letter
// forward by k.
func unshift(s string, k int) string {
	const lower, upper = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	pairs := make([]string, 0, 4*26)
	for i := range 26 {
		j := (i + k) % 26
		pairs = append(pairs, lower[j:j+1], lower[i:i+1], upper[j:j+1], upper[i:i+1])
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// leetLetters maps the digits and symbols of leetspeak to the letter they
// usually stand for.
var leetLetters = map[rune]rune{'4': 'a', '@': 'a', '8': 'b', '3': 'e', '9': 'g', '6': 'g', '1': 'i', '!': 'i', '|': 'l', '0': 'o', '5': 's', '$': 's', '7': 't', '+': 't', '2': 'z'}

// unleet reads words that mix letters with leetspeak digits and symbols as
// letters ("1gn0r3" -> "ignore"), when at least two words do; plain
// numbers and prose stay as they are.
func unleet(s string) (string, bool) {
	words := strings.Fields(s)
	mixed := 0
	for _, w := range words {
		if isLeet(w) {
			mixed++
		}
	}
	if mixed < 2 {
		return s, false
	}
	var b strings.Builder
	for i, w := range strings.Split(s, " ") {
		if i > 0 {
			b.WriteByte(' ')
		}
		if !isLeet(w) {
			b.WriteString(w)
			continue
		}
		for _, c := range w {
			if l, ok := leetLetters[c]; ok {
				c = l
			}
			b.WriteRune(c)
		}
	}
	return b.String(), true
}

// isLeet: a word with a letter and a leetspeak digit or symbol between
// letters or digits, such as "1gn0r3" or "pr3v10u5".
func isLeet(w string) bool {
	letters, leet := 0, 0
	for _, c := range w {
		switch {
		case unicode.IsLetter(c):
			letters++
		case leetLetters[c] != 0 && c != '!' && c != '+' && c != '|':
			leet++
		}
	}
	return letters > 0 && leet > 0
}
