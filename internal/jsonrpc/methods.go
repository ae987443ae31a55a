package jsonrpc

import "context"

// Methods routes requests and notifications by method. An unknown request
// is answered MethodNotFound; an unknown notification is dropped.
type Methods map[string]Handler

// Handle is a Handler over the table.
func (m Methods) Handle(ctx context.Context, req *Request) (any, error) {
	h := m[req.Method]
	if h == nil {
		if req.IsCall() {
			return nil, Errorf(MethodNotFound, "method not found: %s", req.Method)
		}
		return nil, nil
	}
	return h(ctx, req)
}

// CallFunc is a Handler that decodes the params into a P (InvalidParams
// when they do not fit) and answers with f's result.
func CallFunc[P, R any](f func(context.Context, *P) (R, error)) Handler {
	return func(ctx context.Context, req *Request) (any, error) {
		var p P
		if err := req.Decode(&p); err != nil {
			return nil, err
		}
		return f(ctx, &p)
	}
}

// NotifyFunc is a Handler of a notification with params of type P.
func NotifyFunc[P any](f func(context.Context, *P) error) Handler {
	return func(ctx context.Context, req *Request) (any, error) {
		var p P
		if err := req.Decode(&p); err != nil {
			return nil, err
		}
		return nil, f(ctx, &p)
	}
}
