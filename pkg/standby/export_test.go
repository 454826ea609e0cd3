package standby

import "github.com/wsfan/wsfan/pkg/client"

// OneBudget reports whether every leg paces its requests with one budget.
func (sb *Standby) OneBudget() bool {
	for _, c := range sb.legs {
		if c.Budget() != sb.legs[0].Budget() || c.Budget() == (client.Budget{}) {
			return false
		}
	}
	return true
}

// Merges counts the Standby's merged subscriptions not ended.
func (sb *Standby) Merges() int {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return len(sb.merges)
}
