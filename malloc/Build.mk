# malloc/: the malloc API, linked into libuslab.so and libuslab.a.
malloc-objs += malloc/malloc.o malloc/options.o malloc/debug.o malloc/init.o
