# frozen_string_literal: true

require_relative "lib/shmring/version"

Gem::Specification.new do |spec|
  spec.name = "shmring"
  spec.version = Shmring::VERSION
  spec.summary = "Consistent-hash rings in shared memory for Puma and Unicorn workers"
  spec.description = <<~TEXT
    A C extension over libshmring's reader: every worker of a prefork server looks
    keys up in one ring that ringctl publishes in POSIX shared memory, with no locks
    and no system calls, and follows each new version on its next lookup.
  TEXT
  spec.authors = ["shmring contributors"]
  spec.license = "MIT"
  spec.required_ruby_version = ">= 2.7"
  spec.files = Dir["lib/**/*.rb", "ext/shmring/*.{c,rb}", "README.md"]
  spec.extensions = ["ext/shmring/extconf.rb"]
  spec.require_paths = ["lib"]
end
