# frozen_string_literal: true

# The README's worker (config.ru, puma.rb, unicorn.rb), taken from the README as it is
# written, under a real Puma started before its ring exists and a real Unicorn started
# after (its master opens the ring, preload_app true).
require_relative "server_helper"

class TestReadme < Minitest::Test
  include ServerChecks

  README = File.read(File.expand_path("../README.md", __dir__))

  # The README's ```ruby block whose first line is "# FILE...".
  def readme_file(file)
    start = README.index("```ruby\n# #{file}") or flunk "no #{file} in the README"
    start += "```ruby\n".size
    README[start...README.index("```", start)]
  end

  def start(ctl, argv, inherit)
    %w[config.ru puma.rb unicorn.rb].each { |f| File.write(File.join(work_dir, f), readme_file(f)) }
    @server = ServerProcess.new(work_dir)
    port = @server.port
    env = { "SHMRING_RING" => ctl.name, "SHMRING_DIR" => ctl.directory, "PORT" => port.to_s,
            "RUBYLIB" => ENV["RUBYLIB"] }
    @server.start(argv, env) { |fd| inherit.call(fd, port) }
  end

  # Asks each key of KEYS once; every answer must be ringctl's, from GENERATION.
  def check_answers(ctl, keys, generation)
    expected = ctl.lookup(keys)
    keys.each do |key|
      name, address = expected[key].first
      assert_equal [200, "#{key} -> #{name} #{address} (generation #{generation})\n"], @server.get("/#{key}")
    end
  end

  def test_puma_started_before_the_ring
    ctl = ringctl
    start(ctl, [ENV.fetch("SHMRING_PUMA", "puma"), "-C", "puma.rb", "config.ru"],
          ->(fd, port) { { "PUMA_INHERIT_0" => "#{fd}:tcp://127.0.0.1:#{port}" } })
    8.times { assert_equal [503, "ring #{ctl.name} does not exist yet\n"], @server.get("/user:42") }
    ctl.call("init")
    ctl.load_nodes(20)
    check_answers(ctl, KEYS.first(200), 2)
    ctl.call("down", "node3")
    check_answers(ctl, KEYS.first(200), 3)
    ctl.call("destroy")
    # A worker that opened the ring says it was destroyed; one that never served a
    # request since it was published has none yet.
    answers = Array.new(40) { @server.get("/user:42") }.uniq
    assert_includes answers, [503, "ring #{ctl.name} was destroyed (generation 3)\n"]
    assert_empty answers - [[503, "ring #{ctl.name} was destroyed (generation 3)\n"],
                            [503, "ring #{ctl.name} does not exist yet\n"]]
    ctl.load_nodes(10, prefix: "again")
    name, address = ctl.lookup(["user:42"])["user:42"].first
    made_again = [200, "user:42 -> #{name} #{address} (generation 1)\n"]
    # Each worker follows the ring made again within 100 ms of a request: wait until
    # 40 requests in a row answer from it.
    wait_until("40 answers in a row from the ring made again", timeout: 120) do
      40.times.all? { @server.get("/user:42") == made_again }
    end
    check_answers(ctl, KEYS.first(100), 1)
  end

  def test_unicorn_started_after_the_ring
    ctl = ringctl
    ctl.call("init")
    ctl.load_nodes(30)
    start(ctl, [ENV.fetch("SHMRING_UNICORN", "unicorn"), "-c", "unicorn.rb", "config.ru"],
          ->(fd, _port) { { "UNICORN_FD" => fd.to_s } })
    check_answers(ctl, KEYS.first(200), 2)
    ctl.call("add", "extra", "10.9.9.9:11211", "--weight", "20")
    check_answers(ctl, KEYS.first(200), 3)
    ctl.call("destroy")
    # Every worker inherited the master's ring: each says it was destroyed.
    40.times do
      assert_equal [503, "ring #{ctl.name} was destroyed (generation 3)\n"], @server.get("/user:42")
    end
  end
end
