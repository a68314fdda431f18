package decode

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseHFConfig: any config.json gives a config the decoder can be
// built from, or an error; never a panic.
func FuzzParseHFConfig(f *testing.F) {
	for _, kind := range []string{"llama", "qwen2"} {
		b, err := os.ReadFile(filepath.Join("testdata", "hf_"+kind, "config.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 16)
	}
	f.Add([]byte(`{"model_type":"llama","rope_parameters":{"rope_type":"default","rope_theta":5e5}}`), 4)
	f.Fuzz(func(t *testing.T, data []byte, maxSeq int) {
		c, err := ParseHFConfig(data, maxSeq)
		if err != nil {
			return
		}
		if err := c.Decoder.Check(); err != nil || c.Decoder.MaxSeq != maxSeq {
			t.Errorf("accepted %+v: %v", c.Decoder, err)
		}
	})
}
