import Testing

@testable import FetchReports

@Suite("Markdown text")
struct MarkdownTextTests {
  @Test("escape: HTML as entities, link and emphasis punctuation backslashed, line breaks as spaces", arguments: [
    ("<script>alert(1)</script>", "&lt;script&gt;alert\\(1\\)&lt;/script&gt;"),
    ("[x](javascript:alert(1))", "\\[x\\]\\(javascript:alert\\(1\\)\\)"),
    ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert\\(1\\)&gt;"),
    ("a|b", "a\\|b"), ("*=never", "\\*=never"), ("a\nb", "a b"), ("x & y", "x &amp; y"),
    ("periodic:15m", "periodic:15m"), ("12.3 [11, 13]", "12.3 \\[11, 13\\]"), ("`code`", "\\`code\\`"),
  ])
  func escape(_ raw: String, _ escaped: String) {
    #expect(MarkdownText.escape(raw) == escaped)
  }

  @Test("code spans: a fence longer than any backtick run inside, padded when the text starts or ends with one")
  func code() {
    #expect(MarkdownText.code("ios-minimum") == "`ios-minimum`")
    #expect(MarkdownText.code("a`b") == "``a`b``")
    #expect(MarkdownText.code("`x``") == "``` `x`` ```")
    #expect(MarkdownText.code("a\nb") == "`a b`")
  }
}
