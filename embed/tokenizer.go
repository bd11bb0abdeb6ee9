package embed

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxTokenID bounds token ids, so that one past the largest cannot
// overflow; the ids are then checked against the rows of the model.
const maxTokenID = 1<<31 - 2

// Bounds on the work of encoding a text, whatever tokenizer.json asks
// for: WordPiece's cost grows with the cube of a word's length, so a word
// longer than maxWordChars characters is unknown (real models say 100); a
// text is cut at maxTokens times the median token length, taken as at most
// maxMedianLen (real vocabularies: 4 to 8).
const (
	maxWordChars = 200
	maxMedianLen = 32
)

// tokenizer is the part of a Hugging Face tokenizer that Model2Vec models
// use: added tokens matched verbatim, a normalizer, a pre-tokenizer splitting
// words and a WordPiece model, without special tokens around the result
// (Model2Vec encodes with add_special_tokens=False).
type tokenizer struct {
	added     []string // added tokens matched on the raw text, longest first
	normalize func(string) string
	pretok    func(string) []string
	vocab     map[string]int
	unk       string
	unkID     int // -1 when the vocabulary has no unknown token
	prefix    string
	maxChars  int
	size      int // one past the largest token id
	medianLen int // median token length in characters, for truncation
}

// tokenizerFile is the JSON of tokenizer.json, as far as it is read.
type tokenizerFile struct {
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type     string          `json:"type"`
		Unk      *string         `json:"unk_token"`
		Prefix   *string         `json:"continuing_subword_prefix"`
		MaxChars *int            `json:"max_input_chars_per_word"`
		Vocab    json.RawMessage `json:"vocab"`
	} `json:"model"`
}

// parseTokenizer reads a tokenizer.json. Components it does not implement
// are an error naming them, never a silent approximation.
func parseTokenizer(b []byte) (*tokenizer, error) {
	var f tokenizerFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	mt := f.Model.Type
	if mt == "" && f.Model.Prefix != nil {
		mt = "WordPiece" // old files omit the type of a WordPiece model
	}
	if mt != "WordPiece" {
		return nil, fmt.Errorf("tokenizer model %q is not supported (supported: WordPiece)", mt)
	}
	t := &tokenizer{unk: "[UNK]", unkID: -1, prefix: "##", maxChars: 100}
	if err := json.Unmarshal(f.Model.Vocab, &t.vocab); err != nil || len(t.vocab) == 0 {
		return nil, fmt.Errorf("WordPiece model has no vocab (a JSON object of token ids)")
	}
	if f.Model.Unk != nil {
		t.unk = *f.Model.Unk
	}
	if f.Model.Prefix != nil {
		t.prefix = *f.Model.Prefix
	}
	if f.Model.MaxChars != nil {
		t.maxChars = min(*f.Model.MaxChars, maxWordChars)
	}
	if id, ok := t.vocab[t.unk]; ok {
		t.unkID = id
	}
	var err error
	if t.normalize, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.pretok, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	var lens []int
	for tok, id := range t.vocab {
		if id < 0 || id > maxTokenID {
			return nil, fmt.Errorf("token %q has id %d, out of range (0 to %d)", tok, id, maxTokenID)
		}
		t.size = max(t.size, id+1)
		lens = append(lens, utf8.RuneCountInString(tok))
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 || a.ID > maxTokenID || a.Content == "" {
			return nil, fmt.Errorf("added token %q has id %d, out of range (0 to %d) or no content", a.Content, a.ID, maxTokenID)
		}
		if _, ok := t.vocab[a.Content]; !ok {
			t.vocab[a.Content] = a.ID
			lens = append(lens, utf8.RuneCountInString(a.Content))
		}
		t.size = max(t.size, a.ID+1)
		// A normalized added token would be matched on the normalized
		// text; the special tokens of WordPiece models are not normalized.
		if !a.Normalized {
			t.added = append(t.added, a.Content)
		}
	}
	sort.Slice(t.added, func(i, j int) bool { return len(t.added[i]) > len(t.added[j]) })
	sort.Ints(lens)
	// numpy's median, truncated to an int as model2vec does.
	if n := len(lens); n%2 == 1 {
		t.medianLen = lens[n/2]
	} else {
		t.medianLen = (lens[n/2-1] + lens[n/2]) / 2
	}
	t.medianLen = min(max(t.medianLen, 1), maxMedianLen)
	return t, nil
}

// component is the type tag of a normalizer or pre-tokenizer.
type component struct {
	Type          string            `json:"type"`
	CleanText     *bool             `json:"clean_text"`
	ChineseChars  *bool             `json:"handle_chinese_chars"`
	StripAccents  *bool             `json:"strip_accents"`
	Lowercase     *bool             `json:"lowercase"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
}

func isNull(m json.RawMessage) bool { return len(m) == 0 || string(m) == "null" }

func parseNormalizer(m json.RawMessage) (func(string) string, error) {
	if isNull(m) {
		return func(s string) string { return s }, nil
	}
	var c component
	if err := json.Unmarshal(m, &c); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	switch c.Type {
	case "BertNormalizer":
		b := bertNormalizer{clean: true, chinese: true, lower: true}
		if c.CleanText != nil {
			b.clean = *c.CleanText
		}
		if c.ChineseChars != nil {
			b.chinese = *c.ChineseChars
		}
		if c.Lowercase != nil {
			b.lower = *c.Lowercase
		}
		b.strip = b.lower // strip_accents null follows lowercase
		if c.StripAccents != nil {
			b.strip = *c.StripAccents
		}
		return b.apply, nil
	case "Lowercase":
		return strings.ToLower, nil
	case "StripAccents":
		return stripMarks, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFC":
		return norm.NFC.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "Sequence":
		var fs []func(string) string
		for _, sub := range c.Normalizers {
			f, err := parseNormalizer(sub)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		return func(s string) string {
			for _, f := range fs {
				s = f(s)
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("normalizer %q is not supported (supported: BertNormalizer, Lowercase, StripAccents, NFD, NFC, NFKD, NFKC, Sequence)", c.Type)
}

func parsePreTokenizer(m json.RawMessage) (func(string) []string, error) {
	if isNull(m) {
		return nil, fmt.Errorf("no pre_tokenizer: WordPiece needs one (supported: BertPreTokenizer)")
	}
	var c component
	if err := json.Unmarshal(m, &c); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch c.Type {
	case "BertPreTokenizer":
		return bertPreTokenize, nil
	case "Sequence":
		if len(c.PreTokenizers) == 1 {
			return parsePreTokenizer(c.PreTokenizers[0])
		}
	}
	return nil, fmt.Errorf("pre_tokenizer %q is not supported (supported: BertPreTokenizer)", c.Type)
}

// bertNormalizer is Hugging Face's BertNormalizer: drop control characters
// and turn white space into spaces, put spaces around CJK ideographs, strip
// accents (NFD, then drop nonspacing marks), lowercase — in that order.
type bertNormalizer struct{ clean, chinese, strip, lower bool }

func (b bertNormalizer) apply(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case b.clean && (r == 0 || r == utf8.RuneError || (r != '\t' && r != '\n' && r != '\r' && unicode.Is(unicode.C, r))):
			continue
		case b.clean && unicode.IsSpace(r):
			sb.WriteByte(' ')
		case b.chinese && isCJK(r):
			sb.WriteByte(' ')
			sb.WriteRune(r)
			sb.WriteByte(' ')
		default:
			sb.WriteRune(r)
		}
	}
	s = sb.String()
	if b.strip {
		s = stripMarks(s)
	}
	if b.lower {
		s = strings.ToLower(s)
	}
	return s
}

// stripMarks decomposes s (NFD) and drops its nonspacing marks: "café" -> "cafe".
func stripMarks(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(s))
}

// isCJK reports the CJK Unified Ideographs blocks BERT pads with spaces.
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

// bertPreTokenize splits on white space (dropped) and punctuation (each
// punctuation character its own word), as BertPreTokenizer does.
func bertPreTokenize(s string) []string {
	var words []string
	start := -1
	for i, r := range s {
		space := unicode.IsSpace(r)
		punct := !space && (unicode.IsPunct(r) || (r < utf8.RuneSelf && isASCIIPunct(byte(r))))
		if space || punct {
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
			if punct {
				words = append(words, s[i:i+utf8.RuneLen(r)])
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

func isASCIIPunct(c byte) bool {
	return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~')
}

// wordPiece appends the ids of word: the longest vocabulary prefix, then the
// longest continuation (prefixed "##") of the rest, and so on; a word with a
// part not in the vocabulary, or longer than maxChars characters, is the
// single unknown token.
func (t *tokenizer) wordPiece(ids []int, word string) []int {
	if utf8.RuneCountInString(word) > t.maxChars {
		return t.appendUnk(ids)
	}
	n := len(ids)
	var buf []byte
	for start := 0; start < len(word); {
		end := len(word)
		found := -1
		for end > start {
			var id int
			var ok bool
			if start > 0 {
				buf = append(append(buf[:0], t.prefix...), word[start:end]...)
				id, ok = t.vocab[string(buf)] // no allocation for a lookup by converted bytes
			} else {
				id, ok = t.vocab[word[:end]]
			}
			if ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return t.appendUnk(ids[:n])
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

func (t *tokenizer) appendUnk(ids []int) []int {
	if t.unkID >= 0 {
		ids = append(ids, t.unkID)
	}
	return ids
}

// encode returns the token ids of text, without special tokens added.
func (t *tokenizer) encode(text string) []int {
	var ids []int
	for text != "" {
		at, tok := len(text), ""
		for _, a := range t.added {
			if i := strings.Index(text[:min(len(text), at+len(a))], a); i >= 0 && i < at {
				at, tok = i, a
			}
		}
		for _, w := range t.pretok(t.normalize(text[:at])) {
			ids = t.wordPiece(ids, w)
		}
		if tok == "" {
			break
		}
		ids = append(ids, t.vocab[tok])
		text = text[at+len(tok):]
	}
	return ids
}

// tokens returns the token strings of text, for tests and diagnostics.
func (t *tokenizer) tokens(text string) []string {
	byID := make(map[int]string, len(t.vocab))
	for s, id := range t.vocab {
		byID[id] = s
	}
	var out []string
	for _, id := range t.encode(text) {
		out = append(out, byID[id])
	}
	return out
}
