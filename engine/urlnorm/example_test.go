package urlnorm_test

import (
	"fmt"
	"net/url"

	"lidi/engine/urlnorm"
)

func ExampleNormalizer_Normalize() {
	n := &urlnorm.Normalizer{} // the defaults
	for _, raw := range []string{
		"HTTP://Www.Example.COM:80/a/./b/../%7Euser/dir%2fname?utm_source=feed&id=7#top",
		"https://bücher.de/straße?q=ä b",
		"mailto:someone@example.com",
	} {
		norm, err := n.Normalize(raw)
		fmt.Println(norm, err)
	}
	// Output:
	// http://www.example.com/a/~user/dir%2Fname?id=7 <nil>
	// https://xn--bcher-kva.de/stra%C3%9Fe?q=%C3%A4%20b <nil>
	//  urlnorm: scheme is not http or https
}

func ExampleNormalizer_Resolve() {
	base, _ := url.Parse("https://example.com/news/2024/index.html")
	for _, href := range []string{"../2023/story.html?b=2&a=1", "//cdn.example.net/app.js", "#comments"} {
		link, err := urlnorm.Default.Resolve(base, href)
		fmt.Println(link, err)
	}
	sorting := &urlnorm.Normalizer{SortQuery: true}
	link, _ := sorting.Resolve(base, "../2023/story.html?b=2&a=1")
	fmt.Println(link)
	fmt.Println(urlnorm.Host(link), urlnorm.Fingerprint(link) != 0)
	// Output:
	// https://example.com/news/2023/story.html?b=2&a=1 <nil>
	// https://cdn.example.net/app.js <nil>
	// https://example.com/news/2024/index.html <nil>
	// https://example.com/news/2023/story.html?a=1&b=2
	// example.com true
}
