/// Proleptic Gregorian calendar arithmetic on day numbers (days since
/// 1970-01-01), after H. Hinnant, "chrono-compatible low-level date
/// algorithms" (`days_from_civil`, `civil_from_days`). The one copy used by
/// the trace importers, the synthetic population, the data budget and the
/// reports.
package enum CivilDate {
  /// Days since 1970-01-01 of `year`-`month`-`day` (month 1...12, day
  /// 1...31; not validated: see ``isValid(year:month:day:)``).
  package static func days(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }

  /// (year, month 1...12, day 1...31) of a day number.
  package static func civil(fromDays z0: Int) -> (year: Int, month: Int, day: Int) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
  }

  /// Whether `year`-`month`-`day` is a date of the Gregorian calendar.
  package static func isValid(year: Int, month: Int, day: Int) -> Bool {
    guard month >= 1, month <= 12, day >= 1 else { return false }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return day <= monthDays[month - 1]
  }
}
