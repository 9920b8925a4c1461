#include "core/polled_words.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>

namespace cuemu {

// Every thread that has used the copy engine owns a Writer (reused after the thread ends); its sequence is odd
// while a write is in progress. The orderings that make registration safe are all sequentially consistent: a
// writer's increment comes before its look at the polled count, a poller's registration before its look at the
// writers, so one of the two sees the other.
struct HostWrite::Writer {
  std::atomic<uint64_t> sequence{0};
  std::atomic<bool> taken{true};
  Writer* next = nullptr;
};

namespace {

struct Polled {
  std::mutex mutex;
  std::vector<std::pair<uint64_t, unsigned>> words;  // a multiset: two streams may poll one word
  std::atomic<size_t> count{0};
  std::atomic<HostWrite::Writer*> writers{nullptr};
};

Polled& polled() {
  static Polled* state = new Polled;  // never destroyed: streams may poll during exit
  return *state;
}

}  // namespace

namespace {

struct WriterSlot {
  HostWrite::Writer* writer;
  WriterSlot() {
    Polled& p = polled();
    for (HostWrite::Writer* w = p.writers.load(std::memory_order_seq_cst); w; w = w->next) {
      bool taken = false;
      if (w->taken.compare_exchange_strong(taken, true, std::memory_order_seq_cst)) {
        writer = w;
        return;
      }
    }
    writer = new HostWrite::Writer;
    writer->next = p.writers.load(std::memory_order_relaxed);
    while (!p.writers.compare_exchange_weak(writer->next, writer, std::memory_order_seq_cst)) {}
  }
  ~WriterSlot() { writer->taken.store(false, std::memory_order_release); }
};

}  // namespace

HostWrite::HostWrite()
    : writer_(*[] {
        thread_local WriterSlot slot;
        return slot.writer;
      }()) {
  writer_.sequence.fetch_add(1, std::memory_order_seq_cst);
  Polled& p = polled();
  if (p.count.load(std::memory_order_seq_cst) != 0) [[unlikely]] {
    std::lock_guard lock(p.mutex);
    for (auto& [address, size] : p.words) polled_.push_back({address, size});
    std::sort(polled_.begin(), polled_.end());
  }
}

HostWrite::~HostWrite() { writer_.sequence.fetch_add(1, std::memory_order_release); }

bool HostWrite::overlapsPolled(const uint8_t* dst, size_t bytes) const {
  uint64_t begin = reinterpret_cast<uint64_t>(dst), end = begin + bytes;
  for (const Word& word : polled_)
    if (word.address < end && word.address + word.size > begin) return true;
  return false;
}

void HostWrite::storeWord(const Word& word, const uint8_t* value, size_t first, size_t last) {
  auto store = [&]<typename T>(T*) {
    std::atomic_ref<T> cell(*reinterpret_cast<T*>(word.address));
    T wanted;
    std::memcpy(&wanted, value, sizeof(T));
    if (first == 0 && last == sizeof(T)) {
      cell.store(wanted, std::memory_order_seq_cst);
      return;
    }
    // Part of the word: the bytes outside the range keep whatever they hold, even if written meanwhile.
    T old = cell.load(std::memory_order_relaxed), merged;
    do {
      auto* out = reinterpret_cast<uint8_t*>(&merged);
      std::memcpy(out, &old, sizeof(T));
      std::memcpy(out + first, value + first, last - first);
    } while (!cell.compare_exchange_weak(old, merged, std::memory_order_seq_cst, std::memory_order_relaxed));
  };
  if (word.size == 8)
    store(static_cast<uint64_t*>(nullptr));
  else
    store(static_cast<uint32_t*>(nullptr));
}

PolledWord::PolledWord(uint64_t address, unsigned size) : address_(address), size_(size) {
  Polled& p = polled();
  {
    std::lock_guard lock(p.mutex);
    p.words.emplace_back(address, size);
    p.count.fetch_add(1, std::memory_order_seq_cst);
  }
  // A write that looked at the count before it rose cannot know this word: let it end first.
  for (HostWrite::Writer* w = p.writers.load(std::memory_order_seq_cst); w; w = w->next) {
    uint64_t sequence = w->sequence.load(std::memory_order_seq_cst);
    if (sequence % 2 == 0) continue;
    while (w->sequence.load(std::memory_order_acquire) == sequence) std::this_thread::yield();
  }
}

bool isPolled(uint64_t address) {
  Polled& p = polled();
  std::lock_guard lock(p.mutex);
  for (auto& word : p.words)
    if (word.first == address) return true;
  return false;
}

PolledWord::~PolledWord() {
  Polled& p = polled();
  std::lock_guard lock(p.mutex);
  auto it = std::find(p.words.begin(), p.words.end(), std::pair<uint64_t, unsigned>(address_, size_));
  if (it != p.words.end()) p.words.erase(it);
  p.count.fetch_sub(1, std::memory_order_release);
}

}  // namespace cuemu
