// SystemC + TLM-2.0 proof: elaborate a clocked producer/consumer over an
// sc_fifo, and one b_transport into a target with timing annotation.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <systemc>
#include <tlm>

namespace {

SC_MODULE(Producer) {
  sc_core::sc_in<bool> clk;
  sc_core::sc_fifo_out<int> out;
  int count = 0;
  SC_CTOR(Producer) {
    SC_THREAD(run);
    sensitive << clk.pos();
  }
  void run() {
    for (int i = 0; i < 8; ++i) {
      wait();
      out.write(i * i);
      ++count;
    }
  }
};

SC_MODULE(Consumer) {
  sc_core::sc_in<bool> clk;
  sc_core::sc_fifo_in<int> in;
  int sum = 0;
  int received = 0;
  SC_CTOR(Consumer) {
    SC_THREAD(run);
    sensitive << clk.pos();
  }
  void run() {
    while (true) {
      sum += in.read();
      ++received;
    }
  }
};

struct Memory : sc_core::sc_module {
  tlm_utils::simple_target_socket<Memory> socket{"socket"};
  unsigned char data[64] = {};
  explicit Memory(sc_core::sc_module_name n) : sc_core::sc_module(n) {
    socket.register_b_transport(this, &Memory::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    std::memcpy(data + p.get_address(), p.get_data_ptr(), p.get_data_length());
    delay += sc_core::sc_time(10, sc_core::SC_NS);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

struct Writer : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Writer> socket{"socket"};
  sc_core::sc_time annotated;
  SC_HAS_PROCESS(Writer);
  explicit Writer(sc_core::sc_module_name n) : sc_core::sc_module(n) { SC_THREAD(run); }
  void run() {
    unsigned char bytes[4] = {1, 2, 3, 4};
    tlm::tlm_generic_payload p;
    p.set_command(tlm::TLM_WRITE_COMMAND);
    p.set_address(8);
    p.set_data_ptr(bytes);
    p.set_data_length(4);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(p, delay);
    annotated = delay;
  }
};

TEST(SystemC, ElaboratesAndSimulates) {
  sc_core::sc_clock clk("clk", 5, sc_core::SC_NS);
  sc_core::sc_fifo<int> fifo("fifo", 2);
  Producer prod("prod");
  Consumer cons("cons");
  prod.clk(clk);
  prod.out(fifo);
  cons.clk(clk);
  cons.in(fifo);
  Memory mem("mem");
  Writer writer("writer");
  writer.socket.bind(mem.socket);
  sc_core::sc_start(200, sc_core::SC_NS);
  EXPECT_EQ(prod.count, 8);
  EXPECT_EQ(cons.received, 8);
  EXPECT_EQ(cons.sum, 0 + 1 + 4 + 9 + 16 + 25 + 36 + 49);
  EXPECT_EQ(mem.data[11], 4);
  EXPECT_EQ(writer.annotated, sc_core::sc_time(10, sc_core::SC_NS));
}

}  // namespace
