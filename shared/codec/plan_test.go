package codec

import (
	"reflect"
	"testing"
	"time"
)

type planned struct {
	Name   string            `json:"name" dynamodbav:"name"`
	Count  *int64            `json:"count" dynamodbav:"count"`
	Inner  *struct{ A bool } `json:"inner" dynamodbav:"inner"`
	Labels map[string]string `json:"labels" dynamodbav:"-"`
}

// The record shapes get plans of their own; what encoding/json or
// attributevalue treat specially is left to them.
func TestPlans(t *testing.T) {
	testCases := []struct {
		typ        reflect.Type
		json, item bool
	}{
		{reflect.TypeFor[planned](), true, true},
		{reflect.TypeFor[struct{ At time.Time }](), false, false},
		{reflect.TypeFor[struct{ L []string }](), true, false},
		{reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](), false, true},
		{reflect.TypeFor[struct{ planned }](), false, false},
	}
	for _, tc := range testCases {
		t.Run(tc.typ.String(), func(t *testing.T) {
			_, err := newJSONPlan(tc.typ, map[reflect.Type]bool{})
			if (err == nil) != tc.json {
				t.Errorf("JSON plan: %v, want one: %v", err, tc.json)
			}
			_, err = newItemPlan(tc.typ, map[reflect.Type]bool{})
			if (err == nil) != tc.item {
				t.Errorf("item plan: %v, want one: %v", err, tc.item)
			}
		})
	}
}
