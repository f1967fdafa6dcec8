package sam

import (
	"encoding/json"
	"fmt"
)

// EventSourceMappingType is the CloudFormation type of a Lambda event
// source mapping.
const EventSourceMappingType = "AWS::Lambda::EventSourceMapping"

// StreamMapping is an event source mapping from a DynamoDB table's stream
// to a function: what Lambda delivers to it, and how it retries.
type StreamMapping struct {
	LogicalID string
	// Condition is the template condition the mapping exists under.
	Condition string
	// Function and Table are logical IDs: FunctionName: !Ref Function,
	// EventSourceArn: !GetAtt Table.StreamArn.
	Function, Table string
	// Filters are the FilterCriteria patterns, as JSON.
	Filters []string
	// OnFailure is the logical ID of the on-failure destination (its Arn).
	OnFailure                  string
	StartingPosition           string
	BatchSize                  int
	MaximumRetryAttempts       int
	MaximumRecordAgeInSeconds  int
	ParallelizationFactor      int
	TumblingWindowInSeconds    int
	BisectBatchOnFunctionError bool
	FunctionResponseTypes      []string
}

type cfnMapping struct {
	StartingPosition           string
	BatchSize                  flexInt
	MaximumRetryAttempts       flexInt
	MaximumRecordAgeInSeconds  flexInt
	ParallelizationFactor      flexInt
	TumblingWindowInSeconds    flexInt
	BisectBatchOnFunctionError flexBool
	FunctionResponseTypes      []string
	FilterCriteria             struct {
		Filters []struct{ Pattern string }
	}
}

// StreamMappings returns the event source mappings that read a table of
// the template, sorted by logical ID.
func (t *Template) StreamMappings() ([]StreamMapping, error) {
	var out []StreamMapping
	for _, id := range t.ResourcesOfType(EventSourceMappingType) {
		r := t.Resources[id]
		m := StreamMapping{LogicalID: id, Condition: r.Condition}
		var ok bool
		if m.Table, ok = getAtt(r.Properties["EventSourceArn"], "StreamArn"); !ok {
			continue // not a table's stream
		}
		fn, arg, _ := Intrinsic(r.Properties["FunctionName"])
		if m.Function, _ = arg.(string); fn != "Ref" || m.Function == "" {
			return nil, fmt.Errorf("sam: %s: FunctionName is not a !Ref to a function", id)
		}
		if dest, ok := lookup(r.Properties, "DestinationConfig", "OnFailure", "Destination").(map[string]any); ok {
			m.OnFailure, _ = getAtt(dest, "Arn")
		}
		b, err := json.Marshal(t.ResolveParameters(r.Properties))
		if err != nil {
			return nil, err
		}
		var c cfnMapping
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("sam: %s: %w", id, err)
		}
		m.StartingPosition = c.StartingPosition
		m.BatchSize, m.MaximumRetryAttempts = int(c.BatchSize), int(c.MaximumRetryAttempts)
		m.MaximumRecordAgeInSeconds, m.ParallelizationFactor = int(c.MaximumRecordAgeInSeconds), int(c.ParallelizationFactor)
		m.BisectBatchOnFunctionError, m.FunctionResponseTypes = bool(c.BisectBatchOnFunctionError), c.FunctionResponseTypes
		m.TumblingWindowInSeconds = int(c.TumblingWindowInSeconds)
		for _, f := range c.FilterCriteria.Filters {
			m.Filters = append(m.Filters, f.Pattern)
		}
		out = append(out, m)
	}
	return out, nil
}

// getAtt is the resource of !GetAtt Resource.attr.
func getAtt(v any, attr string) (string, bool) {
	name, arg, ok := Intrinsic(v)
	l, isList := arg.([]any)
	if !ok || name != "Fn::GetAtt" || !isList || len(l) != 2 || l[1] != attr {
		return "", false
	}
	res, ok := l[0].(string)
	return res, ok
}
