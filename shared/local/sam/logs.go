package sam

import (
	"fmt"
	"strconv"
)

// LogGroupType is the CloudFormation type of a log group.
const LogGroupType = "AWS::Logs::LogGroup"

// The classes of a log group (LogGroupClass); a group that names none is
// Standard.
const (
	LogClassStandard         = "STANDARD"
	LogClassInfrequentAccess = "INFREQUENT_ACCESS"
)

// LogGroup is a log group of the template as a plain deploy makes it.
type LogGroup struct {
	LogicalID     string
	Class         string // LogClassStandard or LogClassInfrequentAccess
	RetentionDays int
}

// LogGroup returns the log group of that logical ID, its properties
// resolved to the parameters' defaults.
func (t *Template) LogGroup(id string) (LogGroup, error) {
	r, ok := t.Resources[id]
	if !ok || r.Type != LogGroupType {
		return LogGroup{}, fmt.Errorf("sam: no %s %q in the template", LogGroupType, id)
	}
	g := LogGroup{LogicalID: id, Class: LogClassStandard}
	props, _ := t.ResolveParameters(r.Properties).(map[string]any)
	if c, ok := props["LogGroupClass"]; ok {
		if g.Class, ok = c.(string); !ok {
			return LogGroup{}, fmt.Errorf("sam: %s: LogGroupClass %v is not a class", id, c)
		}
	}
	days, err := strconv.Atoi(fmt.Sprint(props["RetentionInDays"]))
	if err != nil {
		// Never expiring: a group whose cost grows without bound.
		return LogGroup{}, fmt.Errorf("sam: %s: RetentionInDays %v is not a number of days", id, props["RetentionInDays"])
	}
	g.RetentionDays = days
	return g, nil
}

// Logging is a function's LoggingConfig as a plain deploy makes it, the
// Globals' merged in: Lambda's log format (JSON or Text), the least level
// of the function's own lines (ApplicationLevel) and of Lambda's lines
// (SystemLevel) that reach its group, which only the JSON format filters,
// and the group.
type Logging struct {
	Format, ApplicationLevel, SystemLevel string
	Group                                 LogGroup
}

// Logging returns the function's logging configuration, its intrinsics
// resolved to the parameters' defaults. A function whose template names
// no group of its own would write to a group Lambda makes, which keeps
// its lines forever: an error.
func (f Function) Logging(t *Template) (Logging, error) {
	cfg, _ := t.ResolveParameters(f.Properties["LoggingConfig"]).(map[string]any)
	l := Logging{Format: "Text"}
	for key, dst := range map[string]*string{"LogFormat": &l.Format, "ApplicationLogLevel": &l.ApplicationLevel, "SystemLogLevel": &l.SystemLevel} {
		if v, ok := cfg[key]; ok {
			s, isStr := v.(string)
			if !isStr {
				return Logging{}, fmt.Errorf("sam: %s: LoggingConfig.%s %v does not resolve", f.LogicalID, key, v)
			}
			*dst = s
		}
	}
	name, arg, ok := Intrinsic(cfg["LogGroup"])
	id, isStr := arg.(string)
	if !ok || name != "Ref" || !isStr {
		return Logging{}, fmt.Errorf("sam: %s: LoggingConfig.LogGroup is not a !Ref to a log group of the template", f.LogicalID)
	}
	var err error
	l.Group, err = t.LogGroup(id)
	return l, err
}

// AccessLog is the HTTP API's access log as the template sets it: the
// format of its lines ($context variables in a JSON object) and its group.
type AccessLog struct {
	Format string
	Group  LogGroup
}

// HTTPAPIAccessLog returns the access log of the template's HTTP API.
func (t *Template) HTTPAPIAccessLog() (AccessLog, error) {
	apis := t.ResourcesOfType("AWS::Serverless::HttpApi")
	if len(apis) != 1 {
		return AccessLog{}, fmt.Errorf("sam: %d HTTP APIs in the template, want 1", len(apis))
	}
	settings, _ := lookup(t.Resources[apis[0]].Properties, "AccessLogSettings").(map[string]any)
	format, ok := settings["Format"].(string)
	if !ok {
		return AccessLog{}, fmt.Errorf("sam: %s: AccessLogSettings has no Format", apis[0])
	}
	id, ok := getAtt(settings["DestinationArn"], "Arn")
	if !ok {
		return AccessLog{}, fmt.Errorf("sam: %s: AccessLogSettings.DestinationArn is not a log group's !GetAtt .Arn", apis[0])
	}
	g, err := t.LogGroup(id)
	return AccessLog{Format: format, Group: g}, err
}
