#!/usr/bin/perl
# Drives Cache::Memcached or Cache::Memcached::Fast for cachet's interop tests.
#
#   perl_client.pl CLIENT PORT probe
#   perl_client.pl CLIENT PORT write   < lines "key<TAB>kind<TAB>hex"
#   perl_client.pl CLIENT PORT read KEY...
#
# CLIENT is "cm" (Cache::Memcached) or "cmf" (Cache::Memcached::Fast, utf8 => 1).
# Both compress from 100 bytes so that short test values still get gzipped.
# Write kinds: bytes (the hex bytes as a byte string), text (the hex bytes decoded
# as UTF-8 into a character string), int (the hex bytes are decimal text, stored as
# a Perl number), hash (a fixed hash ref, which the clients store with Storable).
# Read prints "key<TAB>kind<TAB>hex" per key: kind is bytes, chars (a character
# string; hex of its UTF-8 encoding), undef (a miss) or the ref type (HASH, ...).
# Exit status 2 means the client module is not installed.
use strict;
use warnings;
use Encode qw(decode_utf8 encode_utf8);

my ($client_name, $port, $mode, @keys) = @ARGV;
die "usage: perl_client.pl cm|cmf PORT probe|write|read [KEY...]\n" unless defined $mode;

my %modules = (cm => 'Cache::Memcached', cmf => 'Cache::Memcached::Fast');
my $module = $modules{$client_name} or die "unknown client '$client_name'\n";
unless (eval "require $module; 1") {
  print STDERR "$module is not installed\n";
  exit 2;
}
exit 0 if $mode eq 'probe';

my %options = (servers => ["127.0.0.1:$port"], compress_threshold => 100);
$options{utf8} = 1 if $client_name eq 'cmf';
my $client = $module->new(\%options);

sub value_of {
  my ($kind, $hex) = @_;
  my $bytes = pack('H*', $hex);
  return $bytes if $kind eq 'bytes';
  return decode_utf8($bytes) if $kind eq 'text';
  return 0 + $bytes if $kind eq 'int';
  return {name => 'cachet', list => [1, 2, 3]} if $kind eq 'hash';
  die "unknown kind '$kind'\n";
}

sub describe {
  my ($value) = @_;
  return ('undef', '') unless defined $value;
  return (ref($value), '') if ref($value);
  return ('chars', unpack('H*', encode_utf8($value))) if utf8::is_utf8($value);
  return ('bytes', unpack('H*', $value));
}

if ($mode eq 'write') {
  while (my $line = <STDIN>) {
    chomp $line;
    my ($key, $kind, $hex) = split /\t/, $line, 3;
    $client->set($key, value_of($kind, $hex // '')) or die "set $key failed\n";
  }
} elsif ($mode eq 'read') {
  for my $key (@keys) {
    my ($kind, $hex) = describe($client->get($key));
    print "$key\t$kind\t$hex\n";
  }
} else {
  die "unknown mode '$mode'\n";
}
exit 0;
