package secrets

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// fake makes a made-up key: prefix, then n characters of alphabet drawn
// from a seeded generator (the test file holds no key-shaped literal).
type faker struct{ r *rand.Rand }

func newFaker(seed uint64) *faker { return &faker{rand.New(rand.NewPCG(seed, seed^0x5eed))} }

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum       = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	lowerAlnum  = "abcdefghijklmnopqrstuvwxyz0123456789"
	hexLower    = "0123456789abcdef"
	digits      = "0123456789"
)

func (f *faker) s(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[f.r.IntN(len(alphabet))]
	}
	return string(b)
}

// secretCase is a text that holds a secret of the kind the rule finds.
type secretCase struct {
	kind, rule, text string
}

func secretCorpus() []secretCase {
	f := newFaker(1)
	pem := "-----BEGIN RSA PRIVATE KEY-----\n"
	for range 6 {
		pem += f.s(alnum+"+/", 64) + "\n"
	}
	pem += "-----END RSA PRIVATE KEY-----"
	jwtPart := func(json string) string { return base64.RawURLEncoding.EncodeToString([]byte(json)) }
	jwt := jwtPart(`{"alg":"HS256","typ":"JWT"}`) + "." + jwtPart(`{"sub":"`+f.s(digits, 10)+`","name":"Jo Doe","iat":1516239022}`) + "." + f.s(alnum+"_-", 43)
	return []secretCase{
		{"AWS access key", "aws-access-token", "Deploy uses the CI user; its key is AKIA" + f.s(upperDigits, 16) + " (rotate quarterly)"},
		{"GitHub classic PAT", "github-pat", "export GITHUB_TOKEN=ghp_" + f.s(alnum, 36)},
		{"GitHub fine-grained PAT", "github-fine-grained-pat", "the release bot authenticates with github_pat_" + f.s(alnum+"_", 82)},
		{"Slack bot token", "slack-bot-token", "Slack notifier: xoxb-" + f.s(digits, 12) + "-" + f.s(digits, 13) + "-" + f.s(alnum, 24)},
		{"Slack user token", "slack-user-token", "use xoxp-" + f.s(digits, 11) + "-" + f.s(digits, 11) + "-" + f.s(digits, 12) + "-" + f.s(hexLower, 32) + " for the admin API"},
		{"private key PEM block", "private-key", "The staging deploy key:\n" + pem + "\nkeep it out of git"},
		{"Stripe secret key", "stripe-access-token", "Payments tests hit stripe with sk_live_" + f.s(alnum, 24) + " by mistake"},
		{"Google API key", "gcp-api-key", "Maps widget key AIza" + f.s(alnum+"_-", 35) + " is restricted by referrer"},
		{"GitLab PAT", "gitlab-pat", "CI mirror pushes with glpat-" + f.s(alnum, 20)},
		{"npm token", "npm-access-token", "//registry.npmjs.org/:_authToken=npm_" + f.s(alnum, 36)},
		{"OpenAI key", "openai-api-key", "OPENAI_API_KEY=sk-proj-" + f.s(alnum, 74) + "T3BlbkFJ" + f.s(alnum, 74)},
		{"Anthropic key", "anthropic-api-key", "the eval harness reads sk-ant-api03-" + f.s(alnum+"_-", 93) + "AA from the shell"},
		{"JWT", "jwt", "A captured session token for replay: " + jwt},
		{"SendGrid key", "sendgrid-api-token", "mailer: SG." + f.s(alnum, 22) + "." + f.s(alnum, 43)},
		{"DigitalOcean PAT", "digitalocean-pat", "droplet script uses dop_v1_" + f.s(hexLower, 64)},
		{"Shopify token", "shopify-access-token", "store sync: shpat_" + f.s(hexLower, 32)},
		{"generic password assignment", "generic-api-key", `db config: password = "` + f.s(alnum, 20) + `"`},
		{"generic secret in YAML", "generic-api-key", "client_secret: " + f.s(alnum, 32)},
	}
}

func TestSecretCorpus(t *testing.T) {
	caught, missed := 0, 0
	for _, c := range secretCorpus() {
		fs := Scan(c.text)
		ok := false
		for _, f := range fs {
			if f.RuleID == c.rule {
				ok = true
			}
		}
		if ok {
			caught++
		} else {
			missed++
			t.Errorf("%s: want rule %s, got %+v", c.kind, c.rule, fs)
		}
		for _, f := range fs {
			if secret := secretOf(c.text); secret != "" && strings.Contains(f.Excerpt, secret) {
				t.Errorf("%s: the excerpt shows the secret: %q", c.kind, f.Excerpt)
			}
		}
	}
	t.Logf("secret corpus: %d kinds, caught %d, missed %d", caught+missed, caught, missed)
}

// secretOf is the longest word of text, which in the corpus is the key.
func secretOf(text string) string {
	best := ""
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\n' || r == '=' || r == '"' }) {
		if len(w) > len(best) {
			best = w
		}
	}
	if len(best) < 16 {
		return ""
	}
	return best
}
