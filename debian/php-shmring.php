mod bindings/php/shmring.ini
