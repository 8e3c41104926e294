package language

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/internal/dataset"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

// samples are everyday prompt sentences, written for this test (not from
// the profiles' source).
var samples = []struct{ lang, text string }{
	{"en", "Could you please summarise the attached report and list the three biggest risks for next quarter?"},
	{"de", "Kannst du bitte den beigefügten Bericht zusammenfassen und die drei größten Risiken für das nächste Quartal nennen?"},
	{"fr", "Pourriez-vous résumer le rapport ci-joint et indiquer les trois principaux risques pour le prochain trimestre ?"},
	{"es", "¿Podrías resumir el informe adjunto y enumerar los tres mayores riesgos para el próximo trimestre?"},
	{"it", "Potresti riassumere il rapporto allegato ed elencare i tre rischi più grandi per il prossimo trimestre?"},
	{"pt", "Você poderia resumir o relatório anexo e listar os três maiores riscos para o próximo trimestre?"},
	{"nl", "Kun je het bijgevoegde rapport samenvatten en de drie grootste risico's voor het volgende kwartaal noemen?"},
	{"pl", "Czy możesz podsumować załączony raport i wymienić trzy największe ryzyka na następny kwartał?"},
	{"cs", "Můžeš prosím shrnout přiloženou zprávu a uvést tři největší rizika pro příští čtvrtletí?"},
	{"sv", "Kan du sammanfatta den bifogade rapporten och lista de tre största riskerna för nästa kvartal?"},
	{"da", "Kan du opsummere den vedhæftede rapport og nævne de tre største risici for det næste kvartal?"},
	{"fi", "Voisitko tiivistää liitteenä olevan raportin ja luetella kolme suurinta riskiä seuraavalle vuosineljännekselle?"},
	{"hu", "Össze tudnád foglalni a csatolt jelentést, és felsorolnád a következő negyedév három legnagyobb kockázatát?"},
	{"ro", "Poți să rezumi raportul atașat și să enumeri cele trei riscuri majore pentru trimestrul următor?"},
	{"tr", "Ekteki raporu özetleyip önümüzdeki çeyrek için en büyük üç riski listeleyebilir misin?"},
	{"id", "Bisakah kamu meringkas laporan terlampir dan menyebutkan tiga risiko terbesar untuk kuartal berikutnya?"},
	{"vi", "Bạn có thể tóm tắt báo cáo đính kèm và liệt kê ba rủi ro lớn nhất cho quý tới không?"},
	{"ru", "Не могли бы вы кратко изложить приложенный отчёт и перечислить три главных риска на следующий квартал?"},
	{"uk", "Чи могли б ви коротко викласти доданий звіт і перелічити три найбільші ризики на наступний квартал?"},
	{"bg", "Можеш ли да обобщиш приложения доклад и да изброиш трите най-големи риска за следващото тримесечие?"},
	{"sr", "Можеш ли да сажмеш приложени извештај и наведеш три највећа ризика за следеће тромесечје?"},
	{"el", "Μπορείς να συνοψίσεις τη συνημμένη αναφορά και να αναφέρεις τους τρεις μεγαλύτερους κινδύνους;"},
	{"zh", "请总结附件中的报告，并列出下个季度最大的三个风险，以及应对这些风险的建议措施和负责人。"},
	{"ja", "添付の報告書を要約して、来四半期の最大のリスクを三つ挙げてください。よろしくお願いします。"},
	{"ko", "첨부된 보고서를 요약하고 다음 분기의 가장 큰 위험 세 가지를 나열해 주시겠어요? 감사합니다."},
	{"ar", "هل يمكنك تلخيص التقرير المرفق وذكر أكبر ثلاثة مخاطر للربع القادم من فضلك؟"},
	{"fa", "آیا می\u200cتوانی گزارش پیوست را خلاصه کنی و سه ریسک بزرگ فصل آینده را فهرست کنی؟"},
	{"he", "האם תוכל לסכם את הדוח המצורף ולפרט את שלושת הסיכונים הגדולים ביותר לרבעון הבא?"},
	{"hi", "क्या आप संलग्न रिपोर्ट का सारांश दे सकते हैं और अगली तिमाही के तीन सबसे बड़े जोखिम बता सकते हैं?"},
	{"th", "คุณช่วยสรุปรายงานที่แนบมาและระบุความเสี่ยงที่ใหญ่ที่สุดสามประการสำหรับไตรมาสหน้าได้ไหม"},
}

func TestDetect(t *testing.T) {
	wrong := 0
	for _, s := range samples {
		got, conf, _ := Detect(s.text)
		if got != s.lang {
			wrong++
			t.Logf("%s detected as %s (%.2f): %q", s.lang, got, conf, s.text)
		}
	}
	// One sentence per language is a hard test for close pairs; allow two
	// misses in thirty.
	if wrong > 2 {
		t.Errorf("%d of %d samples misidentified", wrong, len(samples))
	}
}

func TestScan(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		text    string
		flagged bool
	}{
		{"english allowed", Config{Allowed: []string{"en"}}, samples[0].text, false},
		{"german not allowed", Config{Allowed: []string{"en"}}, samples[1].text, true},
		{"german allowed", Config{Allowed: []string{"en", "DE"}}, samples[1].text, false},
		{"short text not judged", Config{Allowed: []string{"en"}}, "Danke schön!", false},
		{"min length lowered", Config{Allowed: []string{"en"}, MinLength: 5}, "Vielen Dank für die schnelle Antwort", true},
		{"chinese", Config{Allowed: []string{"en"}}, samples[22].text, true},
		{"no letters", Config{Allowed: []string{"en"}}, strings.Repeat("1234 5678 ", 20), false},
		{"high confidence bar", Config{Allowed: []string{"en"}, MinConfidence: 0.99}, samples[3].text, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			f, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(tc.text)})
			if err != nil {
				t.Fatal(err)
			}
			if f.Detected != tc.flagged {
				t.Fatalf("got %+v, want flagged=%v", f, tc.flagged)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []Config{{}, {Allowed: []string{"xx"}}, {Allowed: []string{"en"}, MinLength: -1}, {Allowed: []string{"en"}, MinConfidence: 2}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if got := len(Supported()); got < 30 {
		t.Errorf("Supported() has %d languages, want >= 30", got)
	}
}

// TestEnglishPrompts checks that English prompts from the shared data are
// not flagged when English is allowed.
func TestEnglishPrompts(t *testing.T) {
	dir := dataset.Dir()
	if dir == "" {
		t.Skip("shared data not found")
	}
	fh, err := os.Open(filepath.Join(dir, "injection", "dev.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	defer fh.Close()
	s, _ := New(Config{Allowed: []string{"en"}})
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	var n, flagged int
	for sc.Scan() {
		var row struct {
			Text  string `json:"text"`
			Label int    `json:"label"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if row.Label != 0 {
			continue
		}
		n++
		if f, _ := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(row.Text)}); f.Detected {
			flagged++
			t.Logf("flagged (%s): %.100q", f.Reason, row.Text)
		}
	}
	t.Logf("%d of %d benign prompts flagged as not English", flagged, n)
	if float64(flagged) > 0.03*float64(n) {
		t.Errorf("%d of %d flagged", flagged, n)
	}
}

func BenchmarkScan(b *testing.B) {
	s, _ := New(Config{Allowed: []string{"en"}})
	tgt := &scanner.Target{Text: scanner.NewText(scannertest.Prompt2K())}
	b.SetBytes(2048)
	b.ReportAllocs()
	for b.Loop() {
		if f, _ := s.Scan(context.Background(), tgt); f.Detected {
			b.Fatal("clean prompt flagged")
		}
	}
}
