# frozen_string_literal: true

# shmring in a real Unicorn (4 workers): the ring opened in the master before the fork
# (preload_app true) and inherited by every worker; and opened by each worker, started
# before the ring exists. A Unicorn worker serves one connection at a time, so 4
# requests held open at once go to 4 workers.
require_relative "server_helper"

class TestUnicorn < Minitest::Test
  include ServerChecks

  CONFIG = <<~'RUBY'
    worker_processes 4
    listen "127.0.0.1:#{ENV.fetch("SHMRING_TEST_PORT")}"
    timeout 120
    preload_app ENV["SHMRING_TEST_OPEN"] == "load"
    after_worker_ready do |_server, _worker|
      ready = IO.for_fd(Integer(ENV.fetch("SHMRING_TEST_READY_FD")), autoclose: false)
      ready.syswrite("#{Process.pid}\n")
    end
  RUBY

  def start_unicorn(ctl, open, refresh: false, app: APP)
    File.write(File.join(work_dir, "config.ru"), app)
    File.write(File.join(work_dir, "unicorn.rb"), CONFIG)
    @server = ServerProcess.new(work_dir)
    port = @server.port
    @server.start([ENV.fetch("SHMRING_UNICORN", "unicorn"), "-c", "unicorn.rb", "config.ru"],
                  app_env(ctl, open, refresh).merge("SHMRING_TEST_PORT" => port.to_s)) do |fd|
      { "UNICORN_FD" => fd.to_s }
    end
    @server.wait_for_workers
  end

  def test_ring_opened_before_the_fork
    ctl = ringctl
    ctl.load_nodes(30)
    start_unicorn(ctl, "load")
    check_follows_changes(ctl, opened_in_master: true)
    measure_switch_stall(ctl, opened_in_master: true)
  end

  def test_ring_opened_by_each_worker_started_before_it_exists_and_refreshed_by_a_thread
    ctl = ringctl
    start_unicorn(ctl, "request", refresh: true)
    check_ring_lifecycle(ctl)
    measure_switch_stall(ctl, opened_in_master: false, refreshed: true)
  end

  def test_leases_released_on_every_path
    ctl = board_ring(8)
    start_unicorn(ctl, "request", app: LEASE_APP)
    check_leases(ctl)
  end
end
