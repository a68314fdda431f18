package plan

import (
	"os"
	"strings"
	"sync"
)

// EnvVar names the environment variable that selects the placement mode:
// "naive" gives every value its own buffer; anything else (or unset) is
// the default best-fit planner.
const EnvVar = "KILN_PLAN"

// envOptions reads KILN_PLAN once: the planner runs inside Compile, and a
// setting that changed between compilations would make them disagree.
var envOptions = sync.OnceValue(func() Options { return parseEnv(os.Getenv(EnvVar)) })

// FromEnv returns the Options selected by KILN_PLAN, read once per
// process. Make already honours it, so callers need it only to report
// the mode in use.
func FromEnv() Options { return envOptions() }

// parseEnv maps a KILN_PLAN value to Options. Unknown values fall back to
// the default rather than failing: a debugging knob must not break a
// program that never meant to set it.
func parseEnv(v string) Options {
	return Options{Naive: strings.EqualFold(strings.TrimSpace(v), "naive")}
}
