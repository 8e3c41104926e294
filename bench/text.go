package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// sentences are benign English, the kind of text people send to a chat
// model: questions and notes about cooking, gardening, travel, home repair,
// software projects, reading and exercise. They carry no secrets, no
// personal data (no names, numbers, addresses) and none of the phrasing the
// injection scanner looks for, so every benchmark request passes screening
// and every level does the same work downstream.
var sentences = []string{
	"I am planning a vegetable garden on a small balcony that gets sun in the morning and shade after lunch.",
	"Which herbs grow well in containers, and how often should they be watered during a dry summer?",
	"Our tomato plants produced plenty of leaves last year but very little fruit, and I would like to understand why.",
	"The soil in the raised bed feels heavy and stays wet for days after it rains.",
	"I have read that adding compost helps, but I am not sure how much to mix in or when to do it.",
	"Could you suggest a simple plan for rotating beans, squash and leafy greens over a few seasons?",
	"We want to cook a weeknight dinner that is quick, uses seasonal vegetables and does not need special equipment.",
	"My bread dough never rises as much as the recipe promises, even when the kitchen is warm.",
	"What is the difference between baking soda and baking powder, and can one replace the other?",
	"I would like a soup recipe that keeps well in the fridge and tastes better on the second day.",
	"The family prefers mild flavours, so the curry should be fragrant rather than very spicy.",
	"How long should roasted carrots stay in the oven so that they are soft inside and browned at the edges?",
	"We are thinking about a train journey through the mountains in early autumn.",
	"It would help to know which towns along the way have good walking trails and quiet places to stay.",
	"The trip should be relaxed, with a few slow mornings and no more than a few hours of travel each day.",
	"What should we pack for weather that can change from warm sunshine to cold rain within an afternoon?",
	"I am curious about local food markets and whether they are open on weekends.",
	"A friend recommended visiting the old harbour at sunset, but I do not know how to get there from the station.",
	"The kitchen tap drips slowly, and the sound keeps me awake at night.",
	"I replaced the washer once before, yet the drip came back after a few weeks.",
	"The wooden door in the hallway sticks in humid weather and is hard to close.",
	"Is it better to sand the edge of the door or to adjust the hinges first?",
	"We would like to paint the living room a warm colour that still feels bright on grey days.",
	"How do I prepare old plaster walls so that the new paint does not peel?",
	"Our team maintains a small web service that sends weekly reports to customers.",
	"The reports are generated at night, and sometimes the job runs longer than expected and overlaps with the morning traffic.",
	"I want to explain the design to a new colleague without overwhelming them with detail.",
	"Could you outline a gentle way to introduce automated tests to a project that has very few of them?",
	"We are choosing between a relational database and a document store for a catalogue of books and authors.",
	"The catalogue is read far more often than it is written, and most searches are by title or by subject.",
	"I have been reading a history of the printing press and how it changed the way ideas travelled.",
	"It is surprising how quickly pamphlets spread across cities once printing became affordable.",
	"What were the main reasons that paper replaced parchment for everyday writing?",
	"I enjoy novels with slow, careful descriptions of landscapes and small villages.",
	"Could you recommend a few classic books that feel calm and thoughtful rather than dramatic?",
	"Our book club meets once a month, and we like stories that lead to long conversations.",
	"I started running again after a long break, and my knees feel sore after longer routes.",
	"Should I focus on stretching before a run, after a run, or both?",
	"A gentle routine of walking, cycling and swimming sounds appealing for the winter months.",
	"How can I stay motivated to exercise when the days are short and the evenings are dark?",
	"The neighbourhood library is organising a reading festival for children and families.",
	"We need ideas for activities that are fun, cheap to run and suitable for a wide range of ages.",
	"Volunteers will help with storytelling, crafts and a small exhibition of drawings.",
	"I am writing a short speech to thank the volunteers, and it should be warm without being too long.",
	"The museum near the river has a new exhibition about the history of clocks and timekeeping.",
	"I would like to understand how pendulum clocks keep accurate time despite changes in temperature.",
	"My grandmother kept a notebook of recipes, and I want to turn it into a small illustrated booklet for the family.",
	"What is a good way to organise the recipes so that the booklet is easy to browse?",
	"The photographs are old and a little faded, so I am wondering how to make them look clearer when printed.",
	"We adopted a young dog who is friendly but pulls hard on the lead during walks.",
	"Which training methods are kind, consistent and suitable for a busy household?",
	"The dog also barks at the postman every morning, which worries the neighbours.",
	"I am learning to play the piano as an adult and practise in the evenings after work.",
	"Simple pieces feel manageable, but my left hand struggles to keep a steady rhythm.",
	"Our office wants to reduce waste in the shared kitchen and encourage people to bring reusable cups.",
	"I need a friendly message for the team that explains the change and invites suggestions.",
	"The community garden is looking for a fair way to share tools and watering duties among members.",
	"Many members work irregular hours, so the schedule has to be flexible.",
	"I would appreciate a short summary that I can read aloud at the next meeting.",
	"Thank you for taking the time to think this through with me.",
}

// answers are the assistant turns of a multi-turn history.
var answers = []string{
	"That sounds like a lovely project. Start small, choose a few plants you enjoy eating, and watch how much light each corner gets over a whole day before deciding where everything goes.",
	"A good rule of thumb is to water deeply but less often, so the roots grow down rather than staying near the surface. Check the soil with a finger before watering.",
	"Heavy, wet soil usually needs more organic matter. Mix in a generous layer of compost each spring and avoid walking on the beds so the soil stays loose.",
	"For a quick dinner, roast whatever vegetables are in season with olive oil and herbs, then serve them with a grain such as rice or couscous and a simple sauce.",
	"Dough that does not rise is often a sign that the yeast is old or the water was too hot. Try proofing the yeast first and give the dough more time.",
	"A slow journey is a great way to see the mountains. Pick two or three bases and take day trips from each, rather than moving every night.",
	"Pack layers: a light waterproof jacket, a warm sweater and comfortable walking shoes will cover most of what the weather can do in a day.",
	"A dripping tap after a new washer often means the valve seat is worn. A seat cutting tool or a replacement cartridge usually solves it.",
	"Adjust the hinges first, since that is reversible. If the door still sticks, sand the edge lightly and seal it so it absorbs less moisture.",
	"Introduce tests gradually: add them to every bug fix and every new feature, and write a few broad tests around the most important paths.",
	"For a catalogue that is read far more than it is written, either option can work well. A relational database gives you flexible queries and strong consistency.",
	"The printing press made copies cheap and identical, which meant arguments could be read, answered and reprinted within weeks across many cities.",
	"Gentle routines work best when they are easy to start. Lay out your clothes the night before and pick a short route you enjoy.",
	"For children of different ages, stations work well: a story corner, a craft table and a quiet drawing area let families move at their own pace.",
	"Kind, consistent training works best. Stop walking whenever the lead goes tight, and reward the dog with praise and a treat when it walks beside you.",
	"Practise hands separately at a slow tempo, then together with a metronome, and increase the speed only when the passage feels easy.",
	"A friendly note that explains the reason, offers a small incentive and asks for ideas usually gets a warm response from a team.",
	"A shared calendar with swap rules lets members with irregular hours trade watering days without needing a coordinator for every change.",
}

// promptGen builds deterministic benign text.
type promptGen struct{ r *rand.Rand }

func newPromptGen(seed uint64) *promptGen {
	return &promptGen{r: rand.New(rand.NewPCG(seed, 0x5eed))}
}

// paragraphs returns roughly n bytes of text made of whole sentences,
// grouped into paragraphs of three to six sentences.
func (g *promptGen) text(n int) string {
	var b strings.Builder
	inPara := 0
	paraLen := 3 + g.r.IntN(4)
	for b.Len() < n {
		if b.Len() > 0 {
			if inPara == paraLen {
				b.WriteString("\n\n")
				inPara = 0
				paraLen = 3 + g.r.IntN(4)
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(sentences[g.r.IntN(len(sentences))])
		inPara++
	}
	return b.String()
}

func (g *promptGen) answer(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(answers[g.r.IntN(len(answers))])
	}
	return b.String()
}

// tagMarker is where each request's unique words go: the newest user turn
// starts with them, so every request is a message the verdict cache has not
// seen (history turns of the multi-turn scenario repeat, as they do in real
// conversations, and may hit the cache).
const tagMarker = "@@TAG@@"

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream,omitempty"`
}

// body is one scenario's request body split around the unique tag: a
// request is prefix + tag + suffix.
type body struct {
	prefix, suffix []byte
}

func (b body) with(tag string) []byte {
	out := make([]byte, 0, len(b.prefix)+len(tag)+len(b.suffix))
	out = append(out, b.prefix...)
	out = append(out, tag...)
	return append(out, b.suffix...)
}

// buildBody renders a scenario's request: a single user turn of about size
// bytes, or a history of turns user/assistant turns and one new user turn.
func buildBody(seed uint64, size, turns int, stream bool) (body, error) {
	g := newPromptGen(seed)
	req := chatRequest{Model: "gpt-4o-mini", Stream: stream}
	req.Messages = append(req.Messages, chatMessage{Role: "system",
		Content: "Answer questions about home, garden, kitchen and software projects clearly and kindly."})
	for i := range turns {
		if i%2 == 0 {
			req.Messages = append(req.Messages, chatMessage{Role: "user", Content: g.text(300 + g.r.IntN(500))})
		} else {
			req.Messages = append(req.Messages, chatMessage{Role: "assistant", Content: g.answer(300 + g.r.IntN(500))})
		}
	}
	req.Messages = append(req.Messages, chatMessage{Role: "user", Content: "Note " + tagMarker + ". " + g.text(size)})
	raw, err := json.Marshal(req)
	if err != nil {
		return body{}, err
	}
	before, after, ok := strings.Cut(string(raw), tagMarker)
	if !ok {
		return body{}, fmt.Errorf("tag marker lost in rendering")
	}
	return body{prefix: []byte(before), suffix: []byte(after)}, nil
}

// tagWords spell numbers as words: unique text per request with no digits,
// which the PII scanner could take for a phone number.
var tagWords = []string{
	"amber", "birch", "cedar", "daisy", "elm", "fern", "grove", "hazel",
	"iris", "juniper", "kale", "laurel", "maple", "nettle", "oak", "pine",
	"quince", "reed", "sage", "thyme", "umber", "violet", "willow", "yarrow",
	"zinnia", "acorn", "bramble", "clover", "dune", "ember", "flint", "glade",
	"heath", "inlet", "jasper", "knoll", "lagoon", "meadow", "nook", "orchard",
	"pebble", "quarry", "ridge", "spruce", "thicket", "upland", "vale", "wharf",
	"aspen", "brook", "cove", "dell", "estuary", "fjord", "garnet", "harbor",
	"ivy", "jade", "kelp", "lichen", "moss", "nectar", "olive", "poppy",
}

// spell writes n in base len(tagWords), least significant word first.
func spell(b *strings.Builder, n uint64) {
	base := uint64(len(tagWords))
	for {
		b.WriteString(tagWords[n%base])
		n /= base
		if n == 0 {
			return
		}
		b.WriteByte(' ')
	}
}

// tag is the unique words of one request: phase, client and counter.
func tag(phase, client, n uint64) string {
	var b strings.Builder
	spell(&b, phase)
	b.WriteString(" and ")
	spell(&b, client)
	b.WriteString(" then ")
	spell(&b, n)
	return b.String()
}
