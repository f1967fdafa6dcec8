package lambdalocal

import (
	"net/url"
	"strings"

	"contentapi/shared/local/sam"
)

// Router picks a request's route as API Gateway HTTP API does. Of the
// routes that match, the best is, in order of precedence:
//
//  1. one for the request's method rather than ANY;
//  2. one without a greedy {proxy+} variable;
//  3. the more literal one: comparing segment by segment from the left, a
//     literal segment beats a {variable};
//  4. the longer one (a greedy variable that starts later);
//
// and the $default route when none matches. Paths are matched
// case-sensitively, segment by segment, on the decoded segments.
type Router struct {
	routes []pattern
	def    *sam.Route
}

type pattern struct {
	route  sam.Route
	segs   []string // the route path's segments; variables keep their braces
	greedy bool     // the last segment is {name+}
}

// Match is a request's route and the values of its path variables.
type Match struct {
	Route      sam.Route
	PathParams map[string]string // nil when the route has no variables
}

// NewRouter indexes routes, which sam has validated (each route key at most
// once).
func NewRouter(routes []sam.Route) *Router {
	r := &Router{}
	for _, rt := range routes {
		if rt.Path == sam.DefaultRoute {
			def := rt
			r.def = &def
			continue
		}
		segs := splitPath(rt.Path)
		last := segs[len(segs)-1]
		r.routes = append(r.routes, pattern{
			route:  rt,
			segs:   segs,
			greedy: strings.HasPrefix(last, "{") && strings.HasSuffix(last, "+}"),
		})
	}
	return r
}

// Match returns the route for method and rawPath (the path as sent, still
// percent-encoded). ok is false when nothing matches and there is no
// $default route: API Gateway then answers 404 {"message":"Not Found"}
// without calling any function.
func (r *Router) Match(method, rawPath string) (m Match, ok bool) {
	segs := splitPath(rawPath)
	for i, s := range segs {
		// An undecodable escape stays as sent: it can only match a
		// variable, which then carries it verbatim.
		if d, err := url.PathUnescape(s); err == nil {
			segs[i] = d
		}
	}
	var best *pattern
	var bestParams map[string]string
	for i := range r.routes {
		p := &r.routes[i]
		if p.route.Method != method && p.route.Method != "ANY" {
			continue
		}
		params, matched := p.match(segs)
		if matched && (best == nil || p.beats(best, method)) {
			best, bestParams = p, params
		}
	}
	switch {
	case best != nil:
		return Match{Route: best.route, PathParams: bestParams}, true
	case r.def != nil:
		return Match{Route: *r.def}, true
	}
	return Match{}, false
}

func (p *pattern) match(segs []string) (map[string]string, bool) {
	n := len(p.segs)
	if p.greedy {
		// {proxy+} takes one or more segments.
		if len(segs) < n {
			return nil, false
		}
	} else if len(segs) != n {
		return nil, false
	}
	var params map[string]string
	for i, ps := range p.segs {
		name, isVar := variable(ps)
		if !isVar {
			if segs[i] != ps {
				return nil, false
			}
			continue
		}
		value := segs[i]
		if p.greedy && i == n-1 {
			value = strings.Join(segs[i:], "/")
		}
		if value == "" {
			return nil, false // a variable never matches an empty segment
		}
		if params == nil {
			params = map[string]string{}
		}
		params[name] = value
	}
	return params, true
}

// beats reports whether p is a better match than q for a request with the
// given method; both match it.
func (p *pattern) beats(q *pattern, method string) bool {
	if pm, qm := p.route.Method == method, q.route.Method == method; pm != qm {
		return pm
	}
	if p.greedy != q.greedy {
		return !p.greedy
	}
	for i := 0; i < len(p.segs) && i < len(q.segs); i++ {
		_, pVar := variable(p.segs[i])
		_, qVar := variable(q.segs[i])
		if pVar != qVar {
			return !pVar
		}
	}
	return len(p.segs) > len(q.segs)
}

// variable returns the name of a {name} or {name+} segment.
func variable(seg string) (name string, ok bool) {
	if !strings.HasPrefix(seg, "{") || !strings.HasSuffix(seg, "}") {
		return "", false
	}
	return strings.TrimSuffix(seg[1:len(seg)-1], "+"), true
}

// splitPath splits /a/b into [a b]; "/" is one empty segment, and a
// trailing slash adds one, which no variable matches.
func splitPath(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}
