package sam

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, src string) *Template {
	t.Helper()
	tmpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tmpl
}

func TestParseNormalizesShortFormIntrinsics(t *testing.T) {
	tmpl := mustParse(t, `
Parameters:
  Stage: {Type: String, Default: prod}
Conditions:
  IsProd: !Equals [!Ref Stage, prod]
Resources:
  Thing:
    Type: Custom::Thing
    Properties:
      Ref: !Ref Stage
      GetAttShort: !GetAtt Table.Arn
      GetAttNested: !GetAtt Table.StreamSpecification.StreamArn
      GetAttList: !GetAtt [Table, Arn]
      Sub: !Sub '${Table.Arn}/index/*'
      SubList: !Sub ['${X}-y', {X: !Ref Stage}]
      If: !If [IsProd, !Ref Stage, !Ref 'AWS::NoValue']
      Join: !Join ['', [a, !Ref Stage]]
      LongForm: {"Fn::GetAtt": [Table, Arn]}
      Plain: [1, 2.5, true, text, null]
      Quoted: 'true'
      Anchor: &a {k: v}
      Alias: *a
`)
	got := tmpl.Resources["Thing"].Properties
	want := map[string]any{
		"Ref":          map[string]any{"Ref": "Stage"},
		"GetAttShort":  map[string]any{"Fn::GetAtt": []any{"Table", "Arn"}},
		"GetAttNested": map[string]any{"Fn::GetAtt": []any{"Table", "StreamSpecification.StreamArn"}},
		"GetAttList":   map[string]any{"Fn::GetAtt": []any{"Table", "Arn"}},
		"Sub":          map[string]any{"Fn::Sub": "${Table.Arn}/index/*"},
		"SubList":      map[string]any{"Fn::Sub": []any{"${X}-y", map[string]any{"X": map[string]any{"Ref": "Stage"}}}},
		"If": map[string]any{"Fn::If": []any{"IsProd",
			map[string]any{"Ref": "Stage"}, map[string]any{"Ref": "AWS::NoValue"}}},
		"Join":     map[string]any{"Fn::Join": []any{"", []any{"a", map[string]any{"Ref": "Stage"}}}},
		"LongForm": map[string]any{"Fn::GetAtt": []any{"Table", "Arn"}},
		"Plain":    []any{1, 2.5, true, "text", nil},
		"Quoted":   "true",
		"Anchor":   map[string]any{"k": "v"},
		"Alias":    map[string]any{"k": "v"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("properties:\n got %#v\nwant %#v", got, want)
	}
	if p := tmpl.Parameters["Stage"]; p.Type != "String" || p.Default != "prod" {
		t.Errorf("parameter Stage = %+v", p)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown tag", "Resources:\n  A: {Type: X, Properties: {P: !Reff B}}\n", "unknown tag !Reff"},
		{"GetAtt without attribute", "Resources:\n  A: {Type: X, Properties: {P: !GetAtt B}}\n", "not Resource.Attribute"},
		{"duplicate key", "Resources:\n  A: {Type: X}\n  A: {Type: Y}\n", `duplicate key "A"`},
		{"no resources", "Parameters: {}\n", "no Resources"},
		{"resource without type", "Resources:\n  A: {Properties: {}}\n", "Type is missing"},
		{"not a mapping", "- a\n- b\n", "not a mapping"},
		{"empty", "", "empty template"},
		{"path without method", `
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        E: {Type: HttpApi, Properties: {Path: /x}}
`, "needs both Path and Method"},
		{"bad method", `
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        E: {Type: HttpApi, Properties: {Path: /x, Method: FETCH}}
`, `unknown method "FETCH"`},
		{"relative path", `
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        E: {Type: HttpApi, Properties: {Path: x, Method: GET}}
`, "does not start with /"},
		{"route declared twice", `
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        A: {Type: HttpApi, Properties: {Path: /x, Method: get}}
  G:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        B: {Type: HttpApi, Properties: {Path: /x, Method: GET}}
`, `route "GET /x" is declared twice`},
		{"two default routes", `
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        A: {Type: HttpApi}
        B: {Type: HttpApi, Properties: {ApiId: !Ref Api}}
`, `route "$default" is declared twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestFunctionsApplyGlobals(t *testing.T) {
	tmpl := mustParse(t, `
Globals:
  Function:
    Timeout: 10
    Layers: [g]
    Environment:
      Variables: {SHARED: a, OVERRIDDEN: global}
    Tags: !Ref SomeMap
Resources:
  B:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 20
      Layers: [l]
      Environment:
        Variables: {OWN: b, OVERRIDDEN: local}
      Tags: {k: v}
  A:
    Type: AWS::Serverless::Function
  NotAFunction:
    Type: AWS::SQS::Queue
`)
	fns := tmpl.Functions()
	if len(fns) != 2 || fns[0].LogicalID != "A" || fns[1].LogicalID != "B" {
		t.Fatalf("Functions = %+v, want A and B in order", fns)
	}
	a, b := fns[0], fns[1]
	if got := a.EnvNames(); !reflect.DeepEqual(got, []string{"OVERRIDDEN", "SHARED"}) {
		t.Errorf("A env = %v", got)
	}
	if got, want := b.Env(), map[string]any{"SHARED": "a", "OWN": "b", "OVERRIDDEN": "local"}; !reflect.DeepEqual(got, want) {
		t.Errorf("B env = %v, want %v", got, want)
	}
	if a.Timeout() != 10*time.Second || b.Timeout() != 20*time.Second {
		t.Errorf("timeouts = %v, %v", a.Timeout(), b.Timeout())
	}
	if got := b.Properties["Layers"]; !reflect.DeepEqual(got, []any{"g", "l"}) {
		t.Errorf("B layers = %v, want global then local", got)
	}
	// An intrinsic is a value, not a mapping to merge into.
	if got := b.Properties["Tags"]; !reflect.DeepEqual(got, map[string]any{"k": "v"}) {
		t.Errorf("B tags = %v", got)
	}
	if _, err := tmpl.Function("NotAFunction"); err == nil {
		t.Error("Function(NotAFunction) succeeded")
	}
	if f, err := tmpl.Function("B"); err != nil || !reflect.DeepEqual(f, b) {
		t.Errorf("Function(B) = %+v, %v", f, err)
	}
	if d := (Function{}).Timeout(); d != 3*time.Second {
		t.Errorf("default timeout = %v, want Lambda's 3s", d)
	}
}

func TestRoutes(t *testing.T) {
	tmpl := mustParse(t, `
Resources:
  Zed:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Get: {Type: HttpApi, Properties: {ApiId: !Ref Api, Path: '/z/{id}', Method: get}}
        Queue: {Type: SQS, Properties: {Queue: !GetAtt Q.Arn}}
  Alpha:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Fallback: {Type: HttpApi}
        Any: {Type: HttpApi, Properties: {Path: /a, Method: ANY}}
`)
	want := []Route{
		{Method: "ANY", Path: "/a", Function: "Alpha", Event: "Any"},
		{Method: "ANY", Path: "$default", Function: "Alpha", Event: "Fallback"},
		{Method: "GET", Path: "/z/{id}", Function: "Zed", Event: "Get"},
	}
	got := tmpl.Routes()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Routes:\n got %+v\nwant %+v", got, want)
	}
	keys := []string{got[0].Key(), got[1].Key(), got[2].Key()}
	if !reflect.DeepEqual(keys, []string{"ANY /a", "$default", "GET /z/{id}"}) {
		t.Errorf("keys = %v", keys)
	}
}

func TestStatements(t *testing.T) {
	tmpl := mustParse(t, `
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - Version: '2012-10-17'
          Statement:
            - Effect: Allow
              Action: [dynamodb:GetItem, dynamodb:Query]
              Resource:
                - !GetAtt T.Arn
                - !Sub '${T.Arn}/index/*'
                - !Ref Other
                - arn:aws:s3:::bucket
                - !Sub 'arn:${AWS::Partition}:logs:*'
        - Statement:
            Effect: Deny
            Action: s3:*
            Resource: '*'
        - Statement:
            - Effect: Allow
              Action: aws-marketplace:Subscribe
              Resource: '*'
              Condition:
                StringEquals:
                  aws-marketplace:ProductId: !Ref Products
                Bool: {aws:SecureTransport: 'true'}
`)
	f, err := tmpl.Function("F")
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Statements()
	if err != nil {
		t.Fatal(err)
	}
	want := []Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:Query"}, Resources: []ARN{
			{LogicalID: "T", Attribute: "Arn"},
			{LogicalID: "T", Attribute: "Arn", Suffix: "/index/*"},
			{LogicalID: "Other"},
			{Literal: "arn:aws:s3:::bucket"},
			{Literal: "arn:${AWS::Partition}:logs:*"},
		}},
		{Effect: "Deny", Actions: []string{"s3:*"}, Resources: []ARN{{Literal: "*"}}},
		{Effect: "Allow", Actions: []string{"aws-marketplace:Subscribe"}, Resources: []ARN{{Literal: "*"}}, When: []When{
			{Operator: "Bool", Key: "aws:SecureTransport", Value: "true"},
			{Operator: "StringEquals", Key: "aws-marketplace:ProductId", Value: map[string]any{"Ref": "Products"}},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Statements:\n got %+v\nwant %+v", got, want)
	}
	if s := got[0].Resources[1].String(); s != "T.Arn/index/*" {
		t.Errorf("String() = %q", s)
	}
}

func TestStatementsRefusesWhatItCannotRead(t *testing.T) {
	tests := []struct{ name, policies, want string }{
		{"managed policy", "- AWSLambdaBasicExecutionRole", "managed policy"},
		{"policy template", "- DynamoDBCrudPolicy: {TableName: !Ref T}", "policy template (DynamoDBCrudPolicy)"},
		{"empty condition", "- Statement: [{Effect: Allow, Action: s3:*, Resource: '*', Condition: {}}]", "unsupported Condition"},
		{"condition without keys", "- Statement: [{Effect: Allow, Action: s3:*, Resource: '*', Condition: {StringEquals: x}}]", "unsupported Condition StringEquals"},
		{"not action", "- Statement: [{Effect: Allow, NotAction: s3:*, Resource: '*'}]", "unsupported key NotAction"},
		{"no resource", "- Statement: [{Effect: Allow, Action: s3:*}]", "no Action or no Resource"},
		{"intrinsic resource", "- Statement: [{Effect: Allow, Action: s3:*, Resource: !Join ['', [a]]}]", "unsupported resource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Policies:\n        " + tt.policies + "\n"
			f, err := mustParse(t, src).Function("F")
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Statements()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Statements error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
