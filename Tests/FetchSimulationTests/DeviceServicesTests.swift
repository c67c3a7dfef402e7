import FetchSimulation
import Testing

/// The device's shared state: one value per type and key, made once.
@Suite("Device services: a store keyed by type")
struct DeviceServicesTests {
  final class Counter {
    var count = 0
  }
  final class Other {}

  @Test("the same type and key give the same value, made once; another key or type gives another")
  func oneValuePerTypeAndKey() {
    let services = DeviceServices()
    var made = 0
    func counter(_ key: Int) -> Counter { services.shared(Counter.self, key: key) { made += 1; return Counter() } }
    let a = counter(0)
    a.count += 1
    #expect(counter(0) === a)
    #expect(counter(0).count == 1)
    #expect(made == 1)
    let b = counter(1)
    #expect(b !== a)
    #expect(made == 2)
    // A key of another type is another key, even when it prints the same.
    let c = services.shared(Counter.self, key: "0") { made += 1; return Counter() }
    #expect(c !== a)
    #expect(made == 3)
    // Another type under the default key is its own value.
    let o = services.shared(Other.self) { Other() }
    #expect(services.shared(Other.self) { Other() } === o)
    #expect(services.shared(Counter.self) { Counter() } === a)
  }

  @Test("each device replay has its own store")
  func perDevice() {
    let x = DeviceServices().shared(Counter.self) { Counter() }
    let y = DeviceServices().shared(Counter.self) { Counter() }
    #expect(x !== y)
  }
}
