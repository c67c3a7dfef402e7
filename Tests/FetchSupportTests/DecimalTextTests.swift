import Testing

@testable import FetchSupport

@Suite("The decimal number grammar")
struct DecimalTextTests {
  @Test("decimal numbers, with their values", arguments: [
    ("35", 35.0), ("-1.5", -1.5), ("+2", 2), (".5", 0.5), ("5.", 5), ("3.5e1", 35), ("2E-3", 0.002), ("1e+2", 100),
    ("0035", 35), ("-0", 0),
  ])
  func accepted(_ text: String, _ value: Double) {
    #expect(DecimalText.isDecimal(text))
    #expect(DecimalText.finite(text) == value)
  }

  @Test("no hexadecimal, inf, nan, spaces, grouping, units or Unicode digits", arguments: [
    "0x10", "0x1.a5p30", "0X10", "inf", "-inf", "infinity", "nan", "NaN", " 1", "1 ", "1_000", "1,5", "35s", "", "-",
    ".", "e5", "1e", "1e+", "--1", "1..2", "١٢", "0b101",
  ])
  func refused(_ text: String) {
    #expect(!DecimalText.isDecimal(text))
    #expect(DecimalText.value(text) == nil)
  }

  @Test("a magnitude beyond 1.8e308 is a number but not finite")
  func overflow() {
    #expect(DecimalText.value("1e400") == .infinity)
    #expect(DecimalText.finite("1e400") == nil && DecimalText.finite("-1e400") == nil)
  }

  @Test("durations use the grammar: 0x10 is not 16 s")
  func durations() {
    #expect(DurationText.parse("0x10") == nil && DurationText.parse("inf") == nil)
    #expect(DurationText.parse("90") == 90 && DurationText.parse("1h30m") == 5400)
  }
}
