package scope_test

import (
	"fmt"

	"lidi/engine/scope"
)

func ExampleScope_Allow() {
	s, err := scope.New(scope.Config{
		Seeds:          []string{"https://www.example.com/"},
		AllowedDomains: []string{"example.com"},
		Exclude:        []string{`\.pdf$`, `/calendar/`},
		MaxDepth:       5,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, u := range []string{
		"https://blog.example.com/post/1",
		"https://www.example.com/report.pdf",
		"https://elsewhere.org/",
	} {
		fmt.Println(s.Allow(u, 1))
	}
	fmt.Println(s.Allow("https://www.example.com/deep", 6))
	_, err = scope.New(scope.Config{Exclude: []string{"(unclosed"}})
	fmt.Println(err)
	// Output:
	// true allowed
	// false excluded
	// false out-of-host
	// false too-deep
	// scope: bad exclude pattern "(unclosed": error parsing regexp: missing closing ): `(unclosed`
}
