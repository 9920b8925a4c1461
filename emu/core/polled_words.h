#pragma once
// Words that a stream polls (cuStreamWaitValue32/64) while the host's copy engine may write them (cuMemcpy*,
// cuMemset*, graph memcpy and memset nodes on another stream or thread). The poller reads with atomic loads; a
// plain memmove over the same word would be a data race in the C++ memory model (and ThreadSanitizer reports
// it). So the copy engine writes a polled word with one atomic store of the word's size and everything around it
// with plain memmove/memset; while no word is polled (nearly always) a write costs two uncontended atomic
// operations more than the memmove alone.
//
// A write that began before a poll registered its word cannot see it: registration waits for the writes in
// progress on every thread to end, so each write either sees the word or happens before the first load.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cuemu {

// Registers [address, address + size) (size 4 or 8, aligned) as polled for its lifetime.
class PolledWord {
 public:
  PolledWord(uint64_t address, unsigned size);
  ~PolledWord();
  PolledWord(const PolledWord&) = delete;
  PolledWord& operator=(const PolledWord&) = delete;

 private:
  uint64_t address_;
  unsigned size_;
};

// Whether a stream polls a word that starts at `address` now (tests wait for a poll to begin with it).
bool isPolled(uint64_t address);

// One copy-engine operation of the calling thread (one memcpy, memset or strided copy, any number of rows).
class HostWrite {
 public:
  struct Writer;  // a thread's record of its writes in progress (polled_words.cpp)

  HostWrite();
  ~HostWrite();
  HostWrite(const HostWrite&) = delete;
  HostWrite& operator=(const HostWrite&) = delete;

  // Whether [dst, dst + bytes) holds no polled word: the caller may write it as it likes.
  bool plain(const uint8_t* dst, size_t bytes) const { return polled_.empty() || !overlapsPolled(dst, bytes); }

  // Writes [dst, dst + bytes) where some polled word lies: `plainRange(from, to)` writes the bytes at those
  // offsets that lie outside polled words, and each polled word (or its part inside the range) is stored
  // atomically with the bytes `byteAt(offset)` gives.
  template <typename PlainRange, typename ByteAt>
  void writeAroundPolled(uint8_t* dst, size_t bytes, PlainRange&& plainRange, ByteAt&& byteAt) const {
    size_t done = 0;
    for (const Word& word : polled_) {
      uint64_t begin = reinterpret_cast<uint64_t>(dst), end = begin + bytes;
      if (word.address >= end || word.address + word.size <= begin) continue;
      size_t from = word.address > begin ? size_t(word.address - begin) : 0;
      size_t to = std::min<size_t>(bytes, size_t(word.address + word.size - begin));
      if (from > done) plainRange(done, from);
      uint8_t value[8];
      for (unsigned i = 0; i < word.size; ++i) {
        uint64_t at = word.address + i;
        value[i] = at >= begin && at < end ? byteAt(size_t(at - begin)) : 0;
      }
      storeWord(word, value, size_t(std::max(begin, word.address) - word.address),
                size_t(std::min(end, word.address + word.size) - word.address));
      done = std::max(done, to);
    }
    if (done < bytes) plainRange(done, bytes);
  }

 private:
  struct Word {
    uint64_t address;
    unsigned size;
    bool operator<(const Word& o) const { return address < o.address || (address == o.address && size < o.size); }
  };
  bool overlapsPolled(const uint8_t* dst, size_t bytes) const;
  // Stores bytes [first, last) of `value` into the word atomically (the other bytes keep their value).
  static void storeWord(const Word& word, const uint8_t* value, size_t first, size_t last);

  Writer& writer_;
  std::vector<Word> polled_;  // a snapshot, sorted, taken when some word was polled as the write began
};

}  // namespace cuemu
