import Testing

@testable import FetchTraces

@Suite("Train/test split")
struct UserTraceSplitTests {
  @Test("events go to one side; the test part starts with the device state at the split")
  func split() {
    var t = UserTrace(user: "u", start: 0, end: 100)
    let a = t.appIndex("a")
    t.events = [
      TraceEvent(time: 0, kind: .network, value: Double(NetworkKind.wifi.rawValue)),
      TraceEvent(time: 10, kind: .battery, value: 80),
      TraceEvent(time: 20, kind: .open, app: a, value: 5),
      TraceEvent(time: 30, kind: .chargeStart),
      TraceEvent(time: 40, kind: .network, value: Double(NetworkKind.lte.rawValue)),
      TraceEvent(time: 60, kind: .open, app: a, value: 5),
      TraceEvent(time: 70, kind: .chargeEnd),
    ]
    let (train, test) = t.split(at: 50)
    #expect(train.start == 0 && train.end == 50 && train.events.count == 5)
    #expect(test.start == 50 && test.end == 100)
    #expect(test.events.map(\.kind) == [.network, .battery, .chargeStart, .open, .chargeEnd])
    #expect(test.events[0].network == .lte && test.events[0].time == 50)
    #expect(test.events[1].value == 80)
    train._checkInvariants()
    test._checkInvariants()
    let (whole, empty) = t.split(at: 1000)
    #expect(whole.events == t.events && empty.start == 100)
  }

  @Test("both parts name the apps with update rows anywhere in the window, also after a second split")
  func updateApps() {
    var t = UserTrace(user: "u", start: 0, end: 100)
    let (a, b, c) = (t.appIndex("a"), t.appIndex("b"), t.appIndex("c"))
    t.events = [
      TraceEvent(time: 10, kind: .open, app: a, value: 5),
      TraceEvent(time: 20, kind: .update, app: b, value: 0),
      TraceEvent(time: 30, kind: .update, app: b, value: 0),
      TraceEvent(time: 70, kind: .update, app: c, value: 0),
    ]
    let (train, test) = t.split(at: 50)
    #expect(train.splitUpdateApps == [b, c] && test.splitUpdateApps == [b, c])
    // The test part holds c's row only; b's comes from the first split.
    let (_, later) = test.split(at: 80)
    #expect(later.splitUpdateApps == [b, c])
    #expect(!later.splitUpdateApps.contains(a))
  }
}
