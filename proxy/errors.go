package proxy

import (
	"errors"

	"github.com/acp-normalize/acp-normalize/rewrite"
)

func asRuleError(err error, target **rewrite.RuleError) bool { return errors.As(err, target) }
