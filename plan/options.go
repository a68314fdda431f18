package plan

import (
	"os"
	"strings"
	"sync"
)

// DebugEnvVar names the debugging variable: "guard" pads every buffer
// with a guard zone (Options.Guard = Align) for the executor's canaries.
const DebugEnvVar = "KILN_DEBUG"

// EnvVar names the environment variable that selects the placement mode:
// "naive" gives every value its own buffer; anything else (or unset) is
// the default best-fit planner.
const EnvVar = "KILN_PLAN"

// envOptions reads KILN_PLAN once: the planner runs inside Compile, and a
// setting that changed between compilations would make them disagree.
var envOptions = sync.OnceValue(func() Options {
	o := parseEnv(os.Getenv(EnvVar))
	o.Guard = parseDebug(os.Getenv(DebugEnvVar))
	return o
})

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

// parseDebug maps a KILN_DEBUG value (a comma list) to a guard size:
// Align when it names "guard", else 0.
func parseDebug(v string) int {
	for _, f := range strings.Split(v, ",") {
		if strings.EqualFold(strings.TrimSpace(f), "guard") {
			return Align
		}
	}
	return 0
}
