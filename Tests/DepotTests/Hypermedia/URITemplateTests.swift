import Depot
import Testing

/// RFC 6570's own examples: the variables of §3.2 and the tables of §1.2 and §3.2.1–3.2.9.
///
/// `keys` keeps the RFC's order (semi, dot, comma); where the RFC allows any order for
/// an associative array, the expected text uses that one.
@Suite("URITemplate")
struct URITemplateTests {
    static let variables: [String: URITemplate.Value] = [
        "count": ["one", "two", "three"],
        "dom": ["example", "com"],
        "dub": "me/too",
        "hello": "Hello World!",
        "half": "50%",
        "var": "value",
        "who": "fred",
        "base": "http://example.com/home/",
        "path": "/foo/bar",
        "list": ["red", "green", "blue"],
        "keys": ["semi": ";", "dot": ".", "comma": ","],
        "v": "6",
        "x": "1024",
        "y": "768",
        "empty": "",
        "empty_keys": .pairs([]),
        // "undef" is absent: undefined.
    ]

    static func expand(_ template: String) throws -> String {
        try URITemplate(template).expand(variables)
    }

    @Test(
        "Level 1: simple string expansion {var}",
        arguments: [
            ("{var}", "value"),
            ("{hello}", "Hello%20World%21"),
            ("{half}", "50%25"),
            ("O{empty}X", "OX"),
            ("O{undef}X", "OX"),
            ("{x,y}", "1024,768"),
            ("{x,hello,y}", "1024,Hello%20World%21,768"),
            ("?{x,empty}", "?1024,"),
            ("?{x,undef}", "?1024"),
            ("?{undef,y}", "?768"),
            ("map?{x,y}", "map?1024,768"),
        ])
    func simple(template: String, expected: String) throws {
        #expect(try Self.expand(template) == expected)
    }

    @Test(
        "Level 2: reserved expansion {+var}",
        arguments: [
            ("{+var}", "value"),
            ("{+hello}", "Hello%20World!"),
            ("{+half}", "50%25"),
            ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
            ("{+base}index", "http://example.com/home/index"),
            ("O{+empty}X", "OX"),
            ("O{+undef}X", "OX"),
            ("{+path}/here", "/foo/bar/here"),
            ("here?ref={+path}", "here?ref=/foo/bar"),
            ("up{+path}{var}/here", "up/foo/barvalue/here"),
            ("{+x,hello,y}", "1024,Hello%20World!,768"),
            ("{+path,x}/here", "/foo/bar,1024/here"),
        ])
    func reserved(template: String, expected: String) throws {
        #expect(try Self.expand(template) == expected)
    }

    @Test(
        "Level 2: fragment expansion {#var}",
        arguments: [
            ("{#var}", "#value"),
            ("{#hello}", "#Hello%20World!"),
            ("{#half}", "#50%25"),
            ("foo{#empty}", "foo#"),
            ("foo{#undef}", "foo"),
            ("{#x,hello,y}", "#1024,Hello%20World!,768"),
            ("{#path,x}/here", "#/foo/bar,1024/here"),
        ])
    func fragment(template: String, expected: String) throws {
        #expect(try Self.expand(template) == expected)
    }

    @Test(
        "Level 3: label expansion {.var}",
        arguments: [
            ("{.who}", ".fred"),
            ("{.who,who}", ".fred.fred"),
            ("{.half,who}", ".50%25.fred"),
            ("X{.var}", "X.value"),
            ("X{.empty}", "X."),
            ("X{.undef}", "X"),
            ("X{.x,y}", "X.1024.768"),
        ])
    func label(template: String, expected: String) throws {
        #expect(try Self.expand(template) == expected)
    }

    @Test(
        "Level 3: path segment expansion {/var}",
        arguments: [
            ("{/who}", "/fred"),
            ("{/who,who}", "/fred/fred"),
            ("{/half,who}", "/50%25/fred"),
            ("{/who,dub}", "/fred/me%2Ftoo"),
            ("{/var}", "/value"),
            ("{/var,empty}", "/value/"),
            ("{/var,undef}", "/value"),
            ("{/var,x}/here", "/value/1024/here"),
        ])
    func pathSegment(template: String, expected: String) throws {
        #expect(try Self.expand(template) == expected)
    }

    @Test(
        "Level 3: path-style parameter expansion {;var}",
        arguments: [
            ("{;who}", ";who=fred"),
            ("{;half}", ";half=50%25"),
            ("{;empty}", ";empty"),
            ("{;v,empty,who}", ";v=6;empty;who=fred"),
            ("{;v,bar,who}", ";v=6;who=fred"),
            ("{;x,y}", ";x=1024;y=768"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{;x,y,undef}", ";x=1024;y=768"),
        ])
    func pathParameter(template: String, expected: String) throws {
        #expect(try Self.expand(template) == expected)
    }

    @Test(
        "Level 3: form-style query expansion {?var}",
        arguments: [
            ("{?who}", "?who=fred"),
            ("{?half}", "?half=50%25"),
            ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("{?x,y,undef}", "?x=1024&y=768"),
        ])
    func query(template: String, expected: String) throws {
        #expect(try Self.expand(template) == expected)
    }

    @Test(
        "Level 3: form-style query continuation {&var}",
        arguments: [
            ("{&who}", "&who=fred"),
            ("{&half}", "&half=50%25"),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{&x,y,empty}", "&x=1024&y=768&empty="),
            ("{&x,y,undef}", "&x=1024&y=768"),
        ])
    func queryContinuation(template: String, expected: String) throws {
        #expect(try Self.expand(template) == expected)
    }

    @Test(
        "Level 4: prefix and explode modifiers, lists and pairs",
        arguments: [
            ("{var:3}", "val"),
            ("{var:30}", "value"),
            ("{count}", "one,two,three"),
            ("{count*}", "one,two,three"),
            ("{/count}", "/one,two,three"),
            ("{/count*}", "/one/two/three"),
            ("{;count}", ";count=one,two,three"),
            ("{;count*}", ";count=one;count=two;count=three"),
            ("{?count}", "?count=one,two,three"),
            ("{?count*}", "?count=one&count=two&count=three"),
            ("{&count*}", "&count=one&count=two&count=three"),
            ("{list}", "red,green,blue"),
            ("{list*}", "red,green,blue"),
            ("{keys}", "semi,%3B,dot,.,comma,%2C"),
            ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
            ("{+path:6}/here", "/foo/b/here"),
            ("{+list}", "red,green,blue"),
            ("{+list*}", "red,green,blue"),
            ("{+keys}", "semi,;,dot,.,comma,,"),
            ("{+keys*}", "semi=;,dot=.,comma=,"),
            ("{#path:6}/here", "#/foo/b/here"),
            ("{#list}", "#red,green,blue"),
            ("{#list*}", "#red,green,blue"),
            ("{#keys}", "#semi,;,dot,.,comma,,"),
            ("{#keys*}", "#semi=;,dot=.,comma=,"),
            ("www{.dom*}", "www.example.com"),
            ("X{.var:3}", "X.val"),
            ("X{.list}", "X.red,green,blue"),
            ("X{.list*}", "X.red.green.blue"),
            ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
            ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
            ("X{.empty_keys}", "X"),
            ("X{.empty_keys*}", "X"),
            ("{/var:1,var}", "/v/value"),
            ("{/list}", "/red,green,blue"),
            ("{/list*}", "/red/green/blue"),
            ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
            ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
            ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
            ("{;hello:5}", ";hello=Hello"),
            ("{;list}", ";list=red,green,blue"),
            ("{;list*}", ";list=red;list=green;list=blue"),
            ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
            ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
            ("{?var:3}", "?var=val"),
            ("{?list}", "?list=red,green,blue"),
            ("{?list*}", "?list=red&list=green&list=blue"),
            ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
            ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
            ("{&var:3}", "&var=val"),
            ("{&list}", "&list=red,green,blue"),
            ("{&list*}", "&list=red&list=green&list=blue"),
            ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
            ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
        ])
    func level4(template: String, expected: String) throws {
        #expect(try Self.expand(template) == expected)
    }

    @Test("Non-ASCII values are percent-encoded as UTF-8; literals are kept")
    func unicode() throws {
        let template = try URITemplate("/movies/{title}{?q}")
        #expect(
            template.expand(["title": "Amélie", "q": "café crème"])
                == "/movies/Am%C3%A9lie?q=caf%C3%A9%20cr%C3%A8me")
        #expect(try URITemplate("/plain/path").expand([:]) == "/plain/path")
    }

    @Test("variableNames lists each variable once, in order")
    func variableNames() throws {
        #expect(try URITemplate("/movies/{id}{?page,size}{&page}").variableNames == ["id", "page", "size"])
    }

    @Test("JSON values convert to template values: numbers as text, null undefined")
    func jsonValues() throws {
        let template = try URITemplate("/movies{?rating,tags*,gone}")
        let values = ["rating": JSONValue.double(4.5), "tags": ["new", 7], "gone": .null]
            .compactMapValues(URITemplate.Value.init)
        #expect(template.expand(values) == "/movies?rating=4.5&tags=new&tags=7")
    }

    @Test(
        "Malformed templates are invalid requests",
        arguments: [
            "{", "}", "/movies/{id", "{}", "{=x}", "{!x}", "{x y}", "{x:0}", "{x:10000}", "{x,}", "{.x..y}",
        ])
    func malformed(template: String) {
        #expect {
            _ = try URITemplate(template)
        } throws: { error in
            guard case .invalidRequest(let message) = error as? ServiceError else { return false }
            return message.contains("malformed URI template")
        }
    }
}
